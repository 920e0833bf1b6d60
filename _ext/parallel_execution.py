"""Sphinx extension: execute the notebooks a build is about to read in parallel, first.

With ``execute_notebooks: cache`` myst-nb executes each notebook whose code the execution
cache (jupyter-cache, ``_build/.jupyter_cache``) lacks while Sphinx reads it, one after
another. Before reading starts (``env-before-read-docs``), this executes those notebooks in
a pool of one process per CPU, with jupyter-cache's own execution (``single_nb_execution``,
what ``jcache project execute --executor local-parallel`` runs in each process), into the
same cache, so that myst-nb then finds every one there. It is myst-nb's execution in every
way that matters: the same cache, the kernel environment of this process (which
ab_labs sets), the notebook's folder as the working directory, the same timeout and
allow_errors.

A notebook that fails here is not cached, so myst-nb executes it again and reports the
error as it always did: the build's verdict does not depend on this extension.

Only this process writes the cache, one notebook after another, once the pool has
executed them all: the workers only execute. With jupyter-cache's own worker each process
wrote its notebook, and two writing at once could fail: one process's cache pruning read the
other's new record before its file existed ("Notebook file does not exist for cache record",
2 of 200 simultaneous writes on a quiet machine). The notebook, executed but not cached, then
ran again in myst-nb: tests/test_build_cache.py saw it in 1 of 6 CI runs.
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
COST = {"08_training": 62, "09_pretrained": 49, "10_decoder": 35, "07_block": 11, "04_multi_head": 7,
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
    """Executes a notebook as jupyter-cache's worker does (in its folder, with the timeout and
    allow_errors of the build), and returns the result with when the execution started and
    ended (seconds since ``origin``) and the CPU seconds it used, the kernel's included (a
    kernel is a child of the worker, and has ended when the worker returns). It does not
    touch the cache."""

    def __init__(self, origin: float, timeout: int, allow_errors: bool):
        self.origin, self.timeout, self.allow_errors = origin, timeout, allow_errors

    def __call__(self, project_nb) -> tuple:
        """``(result, error, started, ended, cpu)``: jupyter-cache's ExecutionResult (None if
        the execution itself failed: a kernel that did not start) and the error's text, or
        None."""
        from jupyter_cache.executors.utils import single_nb_execution

        start, cpu = time.monotonic(), _cpu_seconds()
        try:
            result = single_nb_execution(project_nb.nb, cwd=str(Path(project_nb.uri).parent),
                                         timeout=self.timeout, allow_errors=self.allow_errors)
            error = result.exc_string or (repr(result.err) if result.err else None)
            result.err = None  # nbclient's exception does not survive pickling: error says it
        except Exception as failure:  # noqa: BLE001 - myst-nb executes it and reports
            result, error = None, repr(failure)
        return (result, error, start - self.origin, time.monotonic() - self.origin,
                _cpu_seconds() - cpu)


def cache_results(cache, project_nbs, results) -> list[str]:
    """Caches each notebook of ``results`` (TimedWorker's, in the order of ``project_nbs``)
    that executed without error, as jupyter-cache's worker would; returns the paths of the
    others (a cell's error, a kernel's, the cache refusing it), which myst-nb executes
    again."""
    import attr
    from jupyter_cache.cache.db import NbProjectRecord
    from jupyter_cache.executors.utils import create_cache_bundle

    failed = []
    for project_nb, (result, error, *_) in zip(project_nbs, results):
        if error is None:
            try:
                executed = attr.evolve(project_nb, nb=result.nb)  # the worker's, with outputs
                cache.cache_notebook_bundle(
                    create_cache_bundle(executed, result.cwd, None, result.time, None),
                    check_validity=False, overwrite=True)
                continue
            except Exception as failure:  # noqa: BLE001 - myst-nb executes it and reports
                error = repr(failure)
        elif result is not None:  # a cell's error, kept as jupyter-cache keeps it
            NbProjectRecord.set_traceback(project_nb.uri, error, cache.db)
        logger.info(f"not cached, {project_nb.uri}: {error.strip().splitlines()[-1]}")
        failed.append(project_nb.uri)
    return failed


def execute_in_parallel(app: Sphinx, env, docnames: list[str]) -> None:
    config = env.mystnb_config
    if config.execution_mode != "cache":
        return
    from jupyter_cache import get_cache

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
    project_nbs = [cache.get_project_notebook(cache.add_nb_to_project(str(path)).pk)
                   for path in outdated]
    logger.info(f"executing {len(project_nbs)} notebooks in {processes} processes")
    start = time.monotonic()
    # fork, as jupyter-cache's local-parallel executor does. The workers never open the
    # cache's database; no open sqlite connection may cross the fork (SQLAlchemy's advice).
    cache.db.dispose()
    worker = TimedWorker(start, config.execution_timeout, config.execution_allow_errors)
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        results = pool.map(worker, project_nbs, chunksize=1)
    failed = cache_results(cache, project_nbs, results)
    for project_nb, (_, _, began, ended, cpu) in zip(project_nbs, results):
        logger.info(f"  {Path(project_nb.uri).stem:24s} {began:6.1f} to {ended:6.1f} s: "
                    f"{ended - began:6.1f} s, {cpu:6.1f} s CPU"
                    + (" (failed)" if project_nb.uri in failed else ""))
    logger.info(f"executed {len(results) - len(failed)} of {len(results)} notebooks in "
                f"{time.monotonic() - start:.1f} s, {sum(r[-1] for r in results):.1f} s CPU"
                + (f"; myst-nb executes again, and reports, {failed}" if failed else ""))


def setup(app: Sphinx) -> dict:
    app.connect("env-before-read-docs", execute_in_parallel)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
