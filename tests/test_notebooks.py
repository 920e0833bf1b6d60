"""The chapters: committed clean, and every one runs top to bottom as a live notebook."""

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


@pytest.mark.slow
@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_runs_live_without_errors(path, monkeypatch):
    """Executed as a reader runs it (no static-build flag): the live widgets are built."""
    # imported here: nbformat's schema validation (jsonschema) and nbclient (jupyter_client,
    # zmq) cost ~1 s at collection, paid by the fast loop that never runs this test
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.delenv("ATTENTION_BOOK_STATIC", raising=False)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    widget_views = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widget_views, "a live chapter shows at least one ipywidgets lab"
