"""Which of the package's modules run during a call: the disk caches' tests check that each
cache key's code digest names every one of them, so that an edit to any module the
computation runs computes it again."""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import attention_book

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
