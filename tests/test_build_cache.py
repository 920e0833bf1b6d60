"""The execution cache cannot hide a change from `make book`.

Jupyter Book executes a chapter again only when the execution cache (jupyter-cache, in
``_build/.jupyter_cache``) lacks its code cells. A change to the package the chapters import
(or to the pinned packages, or to the build's extensions) is invisible to it, so the
Makefile's ``check-inputs`` empties ``_build`` whenever their hash changes: checked here on a
copy of the Makefile and of those inputs, with no build. A change to a chapter's code is the
cache's own business: checked on a tiny book of two one-cell notebooks, built as ``make
book`` builds (same flags, the same parallel pre-execution), whose cells count their runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

# What check-inputs hashes, besides the Makefile itself (which names it).
INPUTS = ["requirements.txt", "constraints.txt", "pyproject.toml"]


@pytest.fixture
def repo(tmp_path) -> Path:
    """A copy of what `make check-inputs` reads, and of one chapter."""
    for name in ["Makefile", *INPUTS]:
        shutil.copy2(ROOT / name, tmp_path / name)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "src" / "attention_book", tmp_path / "src" / "attention_book",
                    ignore=ignore)
    shutil.copytree(ROOT / "_ext", tmp_path / "_ext", ignore=ignore)
    (tmp_path / "chapters").mkdir()
    shutil.copy2(ROOT / "chapters" / "01_embeddings.ipynb", tmp_path / "chapters")
    return tmp_path


def _check_inputs(repo: Path) -> str:
    # not the flags of the `make test` this may run under (-j's jobserver, -n, -k)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    result = subprocess.run(["make", "-s", "--no-print-directory", "check-inputs"], cwd=repo,
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _a_build(repo: Path) -> list[Path]:
    """What a build leaves from an older package: the execution cache, a data script; and
    the disk caches' files (chapter 8's trained models, chapter 9's head removals: kept,
    each file's own key names what decides it)."""
    made = [repo / "_build" / ".jupyter_cache" / "global.db",
            repo / "_build" / "web-data" / "minilm-weights.js",
            *_kept(repo)]
    for path in made:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("from the last build")
    return made[:2]


def _kept(repo: Path) -> list[Path]:
    """A file of each disk cache (attention_book.diskcache), under _build/cache."""
    return [repo / "_build" / "cache" / "train" / "reverse-0123.npz",
            repo / "_build" / "cache" / "removal" / "removal-0123.npz"]


def _edit(path: Path) -> None:
    if path.suffix == ".ipynb":  # a code cell, as the cache would see
        nb = json.loads(path.read_text())
        cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
        cell["source"] = "".join(cell["source"]) + "\n# edited"
        path.write_text(json.dumps(nb))
    else:
        with path.open("a") as f:
            f.write("\n# edited\n" if path.suffix in (".py", ".txt", ".toml") else "\n// edited\n")


@pytest.mark.parametrize("changed", [
    "src/attention_book/attention.py",
    "src/attention_book/web/src/lab.js",
    "src/attention_book/data/" + sorted(p.name for p in (ROOT / "src" / "attention_book" /
                                                        "data").glob("*.txt"))[0],
    "_ext/ab_labs.py",
    *INPUTS,
])
def test_a_change_to_what_the_chapters_import_empties_the_build(repo, changed):
    _check_inputs(repo)
    made = _a_build(repo)
    assert _check_inputs(repo) == ""  # nothing changed: the build stays
    assert all(path.exists() for path in made)
    _edit(repo / changed)
    assert "removing _build" in _check_inputs(repo)
    assert not [path for path in made if path.exists()], f"{changed} changed, _build stayed"
    assert (repo / "_build" / "inputs.sha256").exists()  # the stamp of the next build
    assert all(path.exists() for path in _kept(repo))  # their keys cover their own code


def test_make_clean_drops_the_build_and_the_disk_caches(repo):
    _check_inputs(repo)
    _a_build(repo)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    subprocess.run(["make", "-s", "clean"], cwd=repo, check=True, timeout=60, env=env)
    assert not (repo / "_build").exists()


def test_a_new_file_in_the_package_empties_the_build(repo):
    _check_inputs(repo)
    made = _a_build(repo)
    (repo / "src" / "attention_book" / "data" / "new.json").write_text("{}")
    _check_inputs(repo)
    assert not [path for path in made if path.exists()]


def test_a_build_without_a_stamp_is_emptied(repo):
    """A _build left by a build by hand (jupyter-book build .) does not say what it
    executed, so the first `make book` starts afresh."""
    made = _a_build(repo)
    _check_inputs(repo)
    assert not [path for path in made if path.exists()]


def test_a_chapter_change_leaves_the_build_to_the_cache(repo):
    _check_inputs(repo)
    made = _a_build(repo)
    _edit(repo / "chapters" / "01_embeddings.ipynb")
    assert _check_inputs(repo) == ""
    assert all(path.exists() for path in made)


# ------------------------------------------------------------------ a tiny book, built

CELL = """from pathlib import Path
with Path("runs-{name}.txt").open("a") as f:  # the notebook's folder: one line a run
    f.write("run\\n")
print("{name} says", "{word}")
"""  # its output says "a says hello", its source does not: a page shows the cached output


def _notebook(path: Path, code: str) -> None:
    nb = {"nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                      "language": "python"}},
          "cells": [{"cell_type": "markdown", "id": "title", "metadata": {},
                     "source": f"# {path.stem}"},
                    {"cell_type": "code", "id": "count", "metadata": {}, "source": code,
                     "execution_count": None, "outputs": []}]}
    path.write_text(json.dumps(nb))


@pytest.fixture
def tiny_book(tmp_path) -> Path:
    book = tmp_path / "book"
    book.mkdir()
    (book / "_config.yml").write_text(
        "title: Tiny\n"
        "execute:\n  execute_notebooks: cache\n  timeout: 60\n"
        f"sphinx:\n  local_extensions:\n    parallel_execution: {ROOT / '_ext'}\n")
    (book / "_toc.yml").write_text("format: jb-book\nroot: a\nchapters:\n  - file: b\n")
    for name in "ab":
        _notebook(book / f"{name}.ipynb", CELL.format(name=name, word="hello"))
    return book


def _build(book: Path) -> str:
    """Built as `make book` builds (the Makefile's flags); returns the log."""
    jb = Path(sys.executable).with_name("jupyter-book")
    result = subprocess.run([str(jb), "build", str(book), "-W", "-n", "--keep-going", "--all"],
                            capture_output=True, text=True, timeout=300)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    return log


def _runs(book: Path) -> dict[str, int]:
    return {name: len((book / f"runs-{name}.txt").read_text().split())
            if (book / f"runs-{name}.txt").exists() else 0 for name in "ab"}


def _page(book: Path, name: str) -> str:
    return (book / "_build" / "html" / f"{name}.html").read_text()


@pytest.mark.slow
def test_the_cache_keeps_unchanged_notebooks_and_runs_an_edited_cell_again(tiny_book):
    log = _build(tiny_book)
    if len(os.sched_getaffinity(0)) > 1:
        assert "executing 2 notebooks in 2 processes" in log
    # once each, though executed before Sphinx read them: myst-nb found them in the cache
    assert _runs(tiny_book) == {"a": 1, "b": 1}
    assert "a says hello" in _page(tiny_book, "a")

    _build(tiny_book)  # nothing changed
    assert _runs(tiny_book) == {"a": 1, "b": 1}, "an unchanged notebook was executed again"
    assert "a says hello" in _page(tiny_book, "a")  # from the cache

    _notebook(tiny_book / "a.ipynb", CELL.format(name="a", word="again"))
    _build(tiny_book)
    assert _runs(tiny_book) == {"a": 2, "b": 1}, "the edited cell did not run again"
    page = _page(tiny_book, "a")
    assert "a says again" in page and "a says hello" not in page


@pytest.mark.slow
def test_a_cell_error_still_fails_the_build(tiny_book):
    """A notebook that fails in the parallel pre-execution is not cached: myst-nb runs it
    again and reports it, so the strict build fails as it did without the pre-execution."""
    _notebook(tiny_book / "b.ipynb", 'raise ValueError("b is broken")')
    jb = Path(sys.executable).with_name("jupyter-book")
    result = subprocess.run([str(jb), "build", str(tiny_book), "-W", "-n", "--keep-going"],
                            capture_output=True, text=True, timeout=300)
    log = result.stdout + result.stderr
    assert result.returncode != 0, log[-4000:]
    assert "b is broken" in log
    assert _runs(tiny_book) == {"a": 1, "b": 0}


def test_the_data_step_writes_each_missing_file_once(tmp_path, monkeypatch):
    """web_export.write_all, the build step: a writer runs once for all the modules that
    read its files, and not again while its files are there."""
    from attention_book import web_export

    calls = []

    def writer(folder):
        calls.append(folder)
        for name in ("a.js", "b.js"):
            (folder / name).write_text(name)

    monkeypatch.setattr(web_export, "DATA", {"x": (("a.js",), writer),
                                             "y": (("a.js", "b.js"), writer)})
    folder = tmp_path / "web-data"
    assert web_export.write_all(folder) == [folder / "a.js", folder / "b.js"]
    assert calls == [folder]
    web_export.write_all(folder)
    assert calls == [folder]
    (folder / "b.js").unlink()
    web_export.write_all(folder)
    assert calls == [folder, folder] and (folder / "b.js").exists()
