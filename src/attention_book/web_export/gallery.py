"""Chapter 9's first view for the reader's browser: ``pretrained-gallery.js``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..pretrained import MiniLM
from .minilm import b64, classic_script, folder_checked, model_config, tokenizer_spec

__all__ = ["GALLERY_FORMAT", "export_pretrained_gallery"]

#: The version of ``pretrained-gallery.js``'s layout (web/pretrained.js checks it).
GALLERY_FORMAT = 2


def export_pretrained_gallery(path, presets, *, weights_js=None, max_tokens: int = 128,
                              model: MiniLM | None = None) -> dict:
    """Write ``pretrained-gallery.js``: what chapter 9's browser lab shows before the
    reader loads the model (``web/pretrained.js`` reads it).

    A classic script setting ``AttentionBook.pretrainedGallery`` to
    ``{format, model, weights, config, tokenizer, max_tokens, max_text_chars,
    running_sentence, gallery, presets}``:

    - ``tokenizer``: minilm.js's tokenizer spec, the vocabulary as one string of pieces
      joined by newlines (the lab tokenizes any text without the weights file);
    - ``gallery``: the number of gallery sentences and each head score
      (:func:`attention_book.heads.head_scores`) averaged over them, (n_layers * h)
      float64 in C order of (layer, head), as
      :func:`~attention_book.pretrained.gallery_scores` gives them;
    - ``presets``: for each (label, text, query), the text's tokens, all 72 maps,
      :func:`~attention_book.pretrained.single_thread_attention` (the numbers the scene's
      state uses), base64 of float32 (n_layers, h, T, T) in C order, and ``norms``, the
      lengths ||f_h(x_j)|| of what each head writes from each token,
      :func:`~attention_book.pretrained.single_thread_value_norms`, base64 of float32
      (n_layers, h, T) (with the maps they give the lab's ||alpha f(x)|| view: 72 T floats,
      against 72 T^2 for the maps);
    - ``weights``: ``{file, bytes, dtype}`` of ``weights_js`` (the size the lab's button
      announces), or null when no weights file is given.

    Deterministic: the same model and presets give the same bytes.

    Parameters
    ----------
    path : str or pathlib.Path
        The file to write (its folder must exist).
    presets : sequence of (str, str, int)
        (label, text, query), e.g. ``scenes.pretrained.PRETRAINED_PRESETS``; each text
        must fit in ``max_tokens`` tokens.
    weights_js : str or pathlib.Path, optional
        The weights file written by :func:`export_browser_weights` beside it.
    max_tokens : int
        The lab's cap on tokens (``scenes.pretrained.MAX_PRETRAINED_TOKENS``).
    model : MiniLM, optional
        Default :meth:`MiniLM.load`.

    Returns
    -------
    dict
        ``bytes`` (the file's size) and ``presets`` (how many).
    """
    from ..pretrained import gallery_scores, single_thread_attention, single_thread_value_norms
    from ..tokens import MAX_TEXT_CHARS, RUNNING_SENTENCE

    path = folder_checked(path)
    model = MiniLM.load() if model is None else model
    weights = None
    if weights_js is not None:
        weights_js = Path(weights_js)
        if not weights_js.is_file():
            raise ValueError(f"no weights file at {weights_js}: write it first with "
                             f"export_browser_weights")
        with open(weights_js, encoding="ascii") as f:
            head = f.read(4096)
        dtype = head.split('"dtype":"', 1)[1].split('"', 1)[0] if '"dtype":"' in head else None
        weights = {"file": weights_js.name, "bytes": weights_js.stat().st_size, "dtype": dtype}
    spec = tokenizer_spec(model.path)
    if any("\n" in piece for piece in spec["vocab"]):
        raise ValueError("a vocabulary piece holds a newline: it cannot be joined by newlines")
    spec["vocab"] = "\n".join(spec["vocab"])
    stored = []
    for label, text, query in presets:
        tokens = model.tokenize(text)
        if len(tokens) > max_tokens:
            raise ValueError(f"preset {label!r} is {len(tokens)} tokens long; the lab shows "
                             f"at most {max_tokens}")
        maps = np.asarray(single_thread_attention(text), dtype=np.float32)  # (L, h, T, T)
        norms = np.asarray(single_thread_value_norms(text), dtype=np.float32)  # (L, h, T)
        stored.append({"label": label, "text": text, "query": int(query), "tokens": tokens,
                       "maps": b64(maps), "norms": b64(norms)})
    scores = gallery_scores()
    means = scores.mean  # name -> (L, h) float64
    gallery = {
        "format": GALLERY_FORMAT,
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "license": model.license,
        "weights": weights,
        "config": model_config(model),
        "tokenizer": spec,
        "max_tokens": int(max_tokens),
        "max_text_chars": MAX_TEXT_CHARS,
        "running_sentence": RUNNING_SENTENCE,
        "gallery": {"sentences": len(scores.sentences),
                    "mean": {name: [float(v) for v in means[name].ravel()]
                             for name in means}},
        "presets": stored,
    }
    text = classic_script("pretrainedGallery", gallery, (
        "pretrained-gallery.js: chapter 9's lab before the model is loaded (tokenizer, the "
        "preset sentences' maps, the gallery's head scores); written by "
        "attention_book.web_export.export_pretrained_gallery."))
    path.write_text(text, "ascii")
    return {"bytes": len(text), "presets": len(stored)}
