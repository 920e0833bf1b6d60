"""``python -m attention_book.web_export``: the build step, or the tokenizer's tables."""

import sys

from . import BERT_TABLES_JS, write_all, write_char_tables


def _main(argv: list[str]) -> int:
    if argv[:1] == ["build"] and len(argv) == 2:
        for path in write_all(argv[1]):
            print(f"{path}: {path.stat().st_size / 1e6:.2f} MB")
        return 0
    if argv == ["tables"]:
        print(BERT_TABLES_JS.name, "updated" if write_char_tables() else "unchanged")
        return 0
    print("usage: python -m attention_book.web_export build FOLDER\n"
          "       python -m attention_book.web_export tables")
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
