"""Sphinx extension: execute the notebooks a build is about to read in parallel, first.

With ``execute_notebooks: cache`` myst-nb executes each notebook whose code the execution
cache (jupyter-cache, ``_build/.jupyter_cache``) lacks while Sphinx reads it, one after
another. Before reading starts (``env-before-read-docs``), this executes those notebooks in
a pool of one process per CPU, with jupyter-cache's own worker (what ``jcache project
execute --executor local-parallel`` runs), into the same cache, so that myst-nb then finds
every one there. It is myst-nb's execution in every way that matters: the same cache, the
kernel environment of this process (which offline_book sets), the notebook's folder as the
working directory, the same timeout and allow_errors.

A notebook that fails here is not cached, so myst-nb executes it again and reports the
error as it always did: the build's verdict does not depend on this extension.

The chapters go in reverse order, so that the slowest (08 trains two models, 09 exports
the pretrained model) start first and the short ones fill the other process meanwhile. A
fresh build on this 2-CPU machine, shared: 80-86 s, against 141 s serially (190 and 303 s
serially when the machine was busy).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path, PurePosixPath

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


def outdated_notebooks(cache, paths: list[Path]) -> list[Path]:
    """The notebooks among ``paths`` whose code cells the cache holds no execution of."""
    import nbformat

    outdated = []
    for path in paths:
        try:
            cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            outdated.append(path)
    return outdated


def execute_in_parallel(app: Sphinx, env, docnames: list[str]) -> None:
    config = env.mystnb_config
    if config.execution_mode != "cache":
        return
    from jupyter_cache import get_cache
    from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc, ProcessData

    paths = [Path(env.doc2path(docname)) for docname in docnames]
    paths = [p for p in paths if p.suffix == ".ipynb" and not any(
        PurePosixPath(p.as_posix()).match(pattern)
        for pattern in config.execution_excludepatterns)]
    cache = get_cache(config.execution_cache_path)
    outdated = outdated_notebooks(cache, sorted(paths, reverse=True))
    processes = min(len(outdated), len(os.sched_getaffinity(0)))
    if processes < 2:  # nothing to gain: myst-nb executes it as it reads it
        return
    records = [cache.add_nb_to_project(str(path)) for path in outdated]
    jobs = [ProcessData(record.pk, record.uri, cache, config.execution_timeout,
                        config.execution_allow_errors) for record in records]
    logger.info(f"executing {len(jobs)} notebooks in {processes} processes")
    start = time.monotonic()
    # fork, as jupyter-cache's local-parallel executor does: the worker and the cache are
    # inherited rather than pickled (the cache holds its database engine). No open sqlite
    # connection may cross the fork (SQLAlchemy's advice): each process opens its own.
    cache.db.dispose()
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        results = pool.map(ExecutionWorkerLocalMProc(), jobs, chunksize=1)
    failed = [uri for status, uri in results if status != 0]
    logger.info(f"executed {len(jobs) - len(failed)} of {len(jobs)} notebooks in "
                f"{time.monotonic() - start:.1f} s"
                + (f"; myst-nb executes again, and reports, {failed}" if failed else ""))


def setup(app: Sphinx) -> dict:
    app.connect("env-before-read-docs", execute_in_parallel)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
