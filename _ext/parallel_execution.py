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

The longest go first (``COST``), so that the short ones fill the other process at the end
rather than one long chapter running alone after all the others. The log says, for each
notebook, when it started and ended, and the CPU seconds its kernel and its worker used:
the critical path of a build can be read there.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import time
from pathlib import Path, PurePosixPath

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: Kernel CPU seconds of each chapter's execution with empty disk caches (_build/cache), as
#: this pool measured them (the log's per-notebook lines): the median of the four fresh-clone
#: builds of 27 November (issue 24; 08_training 51-88 s, 09_pretrained 43-56 s). The pool
#: takes the notebooks in this order, longest first (a notebook not listed last), so that it
#: ends with short ones. Chapter 8 trains its models, which chapter 9 then loads (waiting
#: for chapter 8's run when the two execute together); chapter 9 computes its head removals.
COST = {"08_training": 62, "09_pretrained": 49, "07_block": 11, "04_multi_head": 7,
        "06_masking": 7, "appendix_cost": 7, "02_positional_encoding": 6, "03_attention": 4,
        "01_embeddings": 3, "05_permutation": 3}


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


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (the kernels)."""
    return sum(getattr(resource.getrusage(who), field)
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for field in ("ru_utime", "ru_stime"))


class TimedWorker:
    """jupyter-cache's worker, also returning when the execution started and ended (seconds
    since ``origin``) and the CPU seconds it used, the kernel's included (a kernel is a
    child of the worker, and has ended when the worker returns)."""

    def __init__(self, origin: float):
        self.origin = origin

    def __call__(self, job):
        from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc

        start, cpu = time.monotonic(), _cpu_seconds()
        status, uri = ExecutionWorkerLocalMProc()(job)
        return (status, uri, start - self.origin, time.monotonic() - self.origin,
                _cpu_seconds() - cpu)


def execute_in_parallel(app: Sphinx, env, docnames: list[str]) -> None:
    config = env.mystnb_config
    if config.execution_mode != "cache":
        return
    from jupyter_cache import get_cache
    from jupyter_cache.executors.basic import ProcessData

    paths = [Path(env.doc2path(docname)) for docname in docnames]
    paths = [p for p in paths if p.suffix == ".ipynb" and not any(
        PurePosixPath(p.as_posix()).match(pattern)
        for pattern in config.execution_excludepatterns)]
    cache = get_cache(config.execution_cache_path)
    paths.sort(key=lambda p: (-COST.get(p.stem, 0), p.name))
    outdated = outdated_notebooks(cache, paths)
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
        results = pool.map(TimedWorker(start), jobs, chunksize=1)
    for status, uri, began, ended, cpu in results:
        logger.info(f"  {Path(uri).stem:24s} {began:6.1f} to {ended:6.1f} s: "
                    f"{ended - began:6.1f} s, {cpu:6.1f} s CPU"
                    + ("" if status == 0 else " (failed)"))
    failed = [uri for status, uri, *_ in results if status != 0]
    logger.info(f"executed {len(jobs) - len(failed)} of {len(jobs)} notebooks in "
                f"{time.monotonic() - start:.1f} s, {sum(r[-1] for r in results):.1f} s CPU"
                + (f"; myst-nb executes again, and reports, {failed}" if failed else ""))


def setup(app: Sphinx) -> dict:
    app.connect("env-before-read-docs", execute_in_parallel)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
