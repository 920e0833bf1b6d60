"""What the disk caches' tests share: which of the package's modules run during a call (each
cache key's code digest must name every one of them, so that an edit to any module the
computation runs computes it again), and a change to the code or a version in the key."""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

import attention_book
from attention_book import diskcache

PACKAGE = Path(attention_book.__file__).parent


def package_modules_run(call: Callable[[], object]) -> set[str]:
    """The dotted names (``attention_book.block``, ...) of the package's modules whose code
    runs while ``call()`` runs (every Python call is recorded by a profile hook)."""
    ran = set()

    def record(frame, event, arg):
        if event == "call":
            ran.add(frame.f_code.co_filename)

    sys.setprofile(record)
    try:
        call()
    finally:
        sys.setprofile(None)
    return {"attention_book." + Path(f).relative_to(PACKAGE).with_suffix("").as_posix()
            .replace("/", ".") for f in ran if Path(f).is_relative_to(PACKAGE)}


def change_code_or_version(change: str, monkeypatch) -> bool:
    """Change what ``change`` names in every cache key: "code" (as if a module of the key's
    digest had been edited: :func:`attention_book.diskcache.module_digest` answers
    otherwise), "numpy" or "torch" (another version). False for any other ``change``: the
    caller's own to make."""
    if change == "code":
        digest = diskcache.module_digest
        monkeypatch.setattr(diskcache, "module_digest", lambda *names: digest(*names)[::-1])
    elif change == "numpy":
        monkeypatch.setattr(np, "__version__", "9.9.9")
    elif change == "torch":
        import torch

        monkeypatch.setattr(torch, "__version__", "9.9.9")
    else:
        return False
    return True
