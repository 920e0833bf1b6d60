"""The chapters are committed clean.

That every one runs top to bottom as a live notebook, with no cell error and at least one
live lab, is checked by tests/test_jupyterlab.py (Run All in JupyterLab, as a reader runs
them); that every one runs in the static build, by the strict build (tests/test_book.py)."""

from __future__ import annotations

import json

import pytest

from conftest import CHAPTERS


def test_there_are_chapters():
    assert [p.stem for p in CHAPTERS][:1] == ["01_embeddings"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_committed_without_outputs(path):
    nb = json.loads(path.read_text())
    dirty = [
        i
        for i, cell in enumerate(nb["cells"])
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count"))
    ]
    assert not dirty, f"{path.name}: cells {dirty} hold outputs; clear them before committing"
