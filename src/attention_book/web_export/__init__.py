"""The data some browser labs read, which the package computes: written by the book's build.

One module a file the page reads, and the tokenizer's tables:

- :mod:`.minilm`: ``minilm-weights.js``, chapter 9's all-MiniLM-L6-v2 in int8 (32.5 MB,
  loaded when the reader asks);
- :mod:`.gallery`: ``pretrained-gallery.js``, the tokenizer and chapter 9's preset
  sentences' maps (the lab's first view, before the model is loaded);
- :mod:`.training`: ``training-checkpoints.js``, chapter 8's two tiny models at their 26
  checkpoints (4.25 MB);
- :mod:`.decoder`: ``decoder-gallery.js``, chapter 10's suggested prompts as the package
  generates them (the lab's first view), and SmolLM2's GGUF file beside it (98.4 MB,
  loaded when the reader asks);
- :mod:`.char_tables`: the tokenizer's character tables inside ``web/src/shared/minilm.js``
  (source code, not data: ``python -m attention_book.web_export tables``).

:data:`DATA` names, per browser module, the files it reads and the function writing them;
:func:`write_all` is the build step (``python -m attention_book.web_export build FOLDER``,
which the book's Sphinx extension runs before the chapters: ``_build/web-data``), so that
showing a lab writes nothing.
"""

from __future__ import annotations

from pathlib import Path

from ..bundles import registry
from .decoder import (DECODER_GALLERY_FORMAT, GALLERY_NEW, export_decoder_gallery,
                      link_or_copy)
from .char_tables import (BERT_TABLES_JS, MINILM_JS, bert_char_tables, char_tables_js,
                          write_char_tables)
from .gallery import GALLERY_FORMAT, export_pretrained_gallery
from .minilm import DTYPES, export_browser_weights, quantize_int8
from .training import (TRAINING_BITS, TRAINING_GROUP, page_checkpoints, quantize_groups,
                       training_data, training_script, write_training_script)

__all__ = ["DATA", "write_data", "write_all", "DTYPES", "MINILM_JS", "BERT_TABLES_JS",
           "export_browser_weights",
           "quantize_int8", "bert_char_tables", "char_tables_js", "write_char_tables",
           "GALLERY_FORMAT", "export_pretrained_gallery", "TRAINING_BITS",
           "TRAINING_GROUP", "quantize_groups", "training_data", "training_script",
           "write_training_script", "page_checkpoints", "DECODER_GALLERY_FORMAT",
           "GALLERY_NEW", "export_decoder_gallery", "link_or_copy"]


def _pretrained_data(folder: Path) -> None:
    """Chapter 9: MiniLM's int8 weights (loaded only when the reader asks) and the preset
    sentences' maps with the tokenizer (the first view, before the model is loaded)."""
    from ..scenes.pretrained import MAX_PRETRAINED_TOKENS, PRETRAINED_PRESETS

    weights = folder / "minilm-weights.js"
    export_browser_weights(weights, "int8")
    export_pretrained_gallery(folder / "pretrained-gallery.js", PRETRAINED_PRESETS,
                              weights_js=weights, max_tokens=MAX_PRETRAINED_TOKENS)


def _training_data(folder: Path) -> None:
    """Chapter 8: both tiny models' 26 checkpoints (5-bit changes from one to the next) and
    the curves the lab draws; the runs are the package's memoised ones, trained once."""
    write_training_script(folder / "training-checkpoints.js")


def _decoder_data(folder: Path) -> None:
    """Chapter 10: SmolLM2's GGUF file as the reader's browser loads it (a hard link to the
    installed package's file where possible), and the suggested prompts' generations."""
    from ..smollm import gguf_path

    gguf = link_or_copy(gguf_path(), folder / gguf_path().name)
    export_decoder_gallery(folder / "decoder-gallery.js", gguf=gguf)


#: The data the package computes for the browser labs (a model's weights, the trained
#: checkpoints): a name -> (the files, a function writing them into a folder). Not in web/:
#: they are made when the book is built. Which lab reads which file, its module says
#: (``pageData``, ``requestData``: ``web/labs.json``).
DATA = {"pretrained": (("minilm-weights.js", "pretrained-gallery.js"), _pretrained_data),
        "training": (("training-checkpoints.js",), _training_data),
        "decoder": (("decoder-gallery.js", "SmolLM2-135M-Instruct.Q4_1.gguf"), _decoder_data)}


def write_data(web: str, folder) -> tuple[Path, ...]:
    """Write the data files browser module ``web`` reads (``web/labs.json``) into
    ``folder``; return their paths."""
    folder, entry = Path(folder), registry()[web]
    names = (*entry["pageData"], *entry["requestData"])
    for files, writer in DATA.values():
        if set(files) & set(names):
            folder.mkdir(parents=True, exist_ok=True)
            writer(folder)
    return tuple(folder / name for name in names)


def write_all(folder) -> list[Path]:
    """The build step: every data file of :data:`DATA` into ``folder``, each writer run
    once and only when a file it writes is missing (``make book`` empties the folder when
    the package changes). Returns the files."""
    folder, ran = Path(folder), set()
    for names, writer in DATA.values():
        if writer not in ran and not all((folder / name).exists() for name in names):
            folder.mkdir(parents=True, exist_ok=True)
            writer(folder)
            ran.add(writer)
    return sorted({folder / name for names, _ in DATA.values() for name in names})
