"""Chapter 10's first view for the reader's browser: ``decoder-gallery.js``, and the GGUF
file beside it, which the page loads only when the reader asks."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from .minilm import b64, classic_script, folder_checked

__all__ = ["DECODER_GALLERY_FORMAT", "GALLERY_NEW", "export_decoder_gallery", "link_or_copy"]

#: The version of ``decoder-gallery.js``'s layout (web/src/labs/decoder/gallery.js checks it).
DECODER_GALLERY_FORMAT = 1
#: Tokens each preset writes in the gallery: the lab's default (its maps weigh 270 T^2 / 2
#: numbers of two bytes, and the site keeps under 15 MB); more need the model itself. The
#: first preset, the lab's first state, writes all the lab can (scenes.decoder.MAX_NEW).
GALLERY_NEW = 12


def _lower_rows(weights: np.ndarray) -> np.ndarray:
    """The causal maps (L, h, T, T) as their lower triangles, row by row, in uint16
    (w * 65535 rounded: within 7.7e-6 of the float32 numbers), C order of (L, h, rows)."""
    L, h, T, _ = weights.shape
    i, j = np.tril_indices(T)  # row by row: (0,0), (1,0), (1,1), (2,0), ...
    low = weights[:, :, i, j]  # (L, h, T (T + 1) / 2)
    return np.round(np.clip(low, 0, 1) * 65535).astype(np.uint16)


def export_decoder_gallery(path, presets=None, *, model=None, gguf=None,
                           n_new: int = GALLERY_NEW) -> dict:
    """Write ``decoder-gallery.js``: what chapter 10's browser lab shows before the reader
    loads the model (``web/src/labs/decoder.js`` reads it).

    A classic script setting ``AttentionBook.decoderGallery`` to ``{format, model, file,
    max_lab_tokens, max_new, top_k, induction, presets}``: ``model`` (name, file name, its
    bytes and config) tells the page which model the presets are of; ``induction`` the
    heads the lab's "induction heads" switch removes; each preset its settings
    (``scenes.decoder.DECODER_PRESETS``) and :func:`scenes.decoder.preset_run` of them:
    ids, pieces, the text after each step, each step's top tokens and logit lens, and the
    maps, base64 of uint16 lower triangles (:func:`_lower_rows`).

    Deterministic: the same model and presets give the same bytes.

    Parameters
    ----------
    path : str or pathlib.Path
        The file to write (its folder must exist).
    presets : sequence of tuple, optional
        Default :data:`scenes.decoder.DECODER_PRESETS`.
    model : smollm.SmolLM, optional
        Default the lab's (SmolLM2-135M-Instruct).
    gguf : str or pathlib.Path, optional
        The model's file as served beside the page (its size is what the load button
        announces); default the model's own.
    n_new : int
        Tokens each preset writes (the first: at least ``scenes.decoder.MAX_NEW``).

    Returns
    -------
    dict
        ``bytes`` (the file's size) and ``presets`` (how many).
    """
    from ..scenes import decoder as scene
    from ..smollm import SmolLM

    path = folder_checked(path)
    model = SmolLM.load() if model is None else model
    gguf = Path(model.path if gguf is None else gguf)
    c = model.config
    stored = []
    for k, (prompt, chat, decoding, temperature, top_k, top_p, seed, off) in enumerate(
            scene.DECODER_PRESETS if presets is None else presets):
        new = max(n_new, scene.MAX_NEW if k == 0 else n_new)
        run = scene.preset_run(model, prompt, chat, decoding, temperature, top_k, top_p, seed,
                               off, n_new=new)
        stored.append({
            "prompt": prompt, "chat": chat, "decoding": decoding, "temperature": temperature,
            "top_k": top_k, "top_p": top_p, "seed": seed, "off_name": off, "n_new": new,
            "off": [list(x) for x in run["off"]], "ids": list(run["ids"]),
            "pieces": list(run["pieces"]), "n_prompt": run["n_prompt"],
            "generated": list(run["generated"]), "next_ids": run["next_ids"].tolist(),
            "next_tokens": [list(x) for x in run["next_tokens"]],
            "next_p": run["next_p"].tolist(), "lens_tokens": [list(x) for x in run["lens_tokens"]],
            "lens_p": run["lens_p"].tolist(), "positions": int(run["weights"].shape[-1]),
            "maps": b64(_lower_rows(run["weights"]))})
    gallery = {
        "format": DECODER_GALLERY_FORMAT,
        "model": {"file": gguf.name, "bytes": gguf.stat().st_size,
                  "n_layers": c.n_layers, "h": c.h, "g": c.g, "d": c.d, "vocab": c.vocab_size},
        "max_lab_tokens": scene.MAX_LAB_TOKENS, "max_new": scene.MAX_NEW, "top_k": scene.TOP_K,
        "induction": [list(x) for x in scene.induction_heads(model)],
        "presets": stored,
    }
    text = classic_script("decoderGallery", gallery, (
        "decoder-gallery.js: chapter 10's lab before the model is loaded (the suggested "
        "prompts' generations, every map, the logit lens); written by "
        "attention_book.web_export.export_decoder_gallery."))
    path.write_text(text, "ascii")
    return {"bytes": len(text), "presets": len(stored)}


def link_or_copy(source, target) -> Path:
    """``target`` holding ``source``'s bytes: a hard link where the file system allows
    (the 98 MB model, beside the site and in the build's data folder), else a copy."""
    source, target = Path(source), Path(target)
    if target.exists():
        target.unlink()
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
    return target
