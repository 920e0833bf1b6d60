"""Shared fixtures: the repository's paths and the book built once per test session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> Path:
    """Build the book strictly (-W -n --keep-going) into a fresh folder; return its html dir.

    The build executes every chapter from scratch (a fresh folder has no execution cache),
    so it also proves the chapters run in the static book.
    """
    out = tmp_path_factory.mktemp("book")
    jb = Path(sys.executable).with_name("jupyter-book")
    result = subprocess.run(
        [str(jb), "build", str(ROOT), "-W", "-n", "--keep-going", "--path-output", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        env={k: v for k, v in os.environ.items() if k != "ATTENTION_BOOK_STATIC"},
    )
    log = result.stdout + result.stderr
    (out / "build.log").write_text(log)
    if result.returncode != 0:
        pytest.fail(f"jupyter-book build failed (exit {result.returncode}):\n{log[-6000:]}")
    return out / "_build" / "html"
