"""``python -m attention_book.web_export``: write one of the browser's data files."""

import sys

from . import (TRAINING_BITS, export_browser_weights, export_pretrained_gallery, write_all,
               write_char_tables, write_training_script)


def _main(argv: list[str]) -> int:
    if argv[:1] == ["build"] and len(argv) == 2:
        for path in write_all(argv[1]):
            print(f"{path}: {path.stat().st_size / 1e6:.2f} MB")
        return 0
    if argv[:1] == ["training"] and len(argv) in (2, 3):
        info = write_training_script(argv[1], bits=int(argv[2]) if len(argv) == 3 else
                                     TRAINING_BITS)
        print(f"{argv[1]}: {info['bytes'] / 1e6:.2f} MB ({info['bits']}-bit deltas)")
        return 0
    if argv[:1] == ["tables"]:
        print("minilm.js", "updated" if write_char_tables() else "unchanged")
        return 0
    if argv[:1] == ["gallery"] and len(argv) in (2, 3):
        from ..scenes.pretrained import MAX_PRETRAINED_TOKENS, PRETRAINED_PRESETS  # the lab's

        info = export_pretrained_gallery(argv[1], PRETRAINED_PRESETS, weights_js=(
            argv[2] if len(argv) == 3 else None), max_tokens=MAX_PRETRAINED_TOKENS)
        print(f"{argv[1]}: {info['bytes'] / 1e3:.0f} kB ({info['presets']} presets)")
        return 0
    if len(argv) in (1, 2) and not argv[0].startswith("-"):
        info = export_browser_weights(argv[0], *argv[1:])
        print(f"{argv[0]}: {info['bytes'] / 1e6:.1f} MB ({info['dtype']})")
        return 0
    print("usage: python -m attention_book.web_export build FOLDER\n"
          "       python -m attention_book.web_export tables\n"
          "       python -m attention_book.web_export OUT.js [int8|float16|mixed|float32]\n"
          "       python -m attention_book.web_export gallery OUT.js [WEIGHTS.js]\n"
          "       python -m attention_book.web_export training OUT.js [bits]")
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
