"""What attention costs: the (s_q, s_k) score matrix, counted and measured (numpy only).

Scaled dot-product attention forms every query-key score, so for s tokens it does
about ``2 s^2 d_k`` multiply-adds for ``Q K^T`` and ``2 s^2 d_v`` for ``weights @ V``
(time O(s^2 d)) and holds an (s, s) matrix (memory O(s^2)). Doubling the sequence length
quadruples both. A whole attention layer also projects X:(s, d) into Q, K and V, which
costs O(s d^2) and grows only linearly in s (:func:`attention_layer_flops`): for short
sequences the projections cost more than the scores.

Measurements use :func:`time.perf_counter` (after warm-up calls, the fastest of several
runs: the one least disturbed by other work) and :mod:`tracemalloc`, which sees numpy's
array allocations: the peak is the most memory the call held at once beyond what existed
before it. By default the call runs on one thread (:func:`blas_threads`) and is timed by
that thread's CPU clock, so the number counts the work, not how many cores the machine
has or how busy they are. :func:`cache_sizes` reads the CPU's cache sizes, to compare them with the
score matrix's bytes.
"""

from __future__ import annotations

import ctypes
import functools
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np

from ._validate import positive_int
from .attention import scaled_dot_product_attention

__all__ = [
    "attention_flops",
    "attention_layer_flops",
    "score_matrix_bytes",
    "best_time",
    "blas_threads",
    "measure_attention",
    "cache_sizes",
    "growth_exponents",
    "LAYER_KINDS",
    "dependency_graph",
    "layer_operations",
    "attention_cheaper_below",
    "sequential_operations",
    "maximum_path_length",
    "layers_to_connect",
    "layer_comparison",
]


def attention_flops(s_q: int, s_k: int, d_k: int, d_v: int | None = None) -> int:
    """Floating-point operations of one attention call (multiply and add counted apart).

    ``2 s_q s_k d_k`` for the scores ``Q K^T`` plus ``2 s_q s_k d_v`` for
    ``weights @ V``; the softmax's O(s_q s_k) is left out (it is smaller by a factor d).

    Parameters
    ----------
    s_q, s_k : int
        Numbers of queries and keys.
    d_k : int
        Query and key dimension.
    d_v : int, optional
        Value dimension; default d_k.

    Returns
    -------
    int
    """
    s_q, s_k = positive_int(s_q, "s_q"), positive_int(s_k, "s_k")
    d_k = positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else positive_int(d_v, "d_v")
    return 2 * s_q * s_k * d_k + 2 * s_q * s_k * d_v


def attention_layer_flops(s: int, d: int, d_k: int | None = None,
                          d_v: int | None = None) -> dict:
    """Floating-point operations of self-attention on X:(s, d), projections included.

    The projections Q = X W^Q, K = X W^K:(s, d) @ (d, d_k) and V = X W^V:(s, d) @ (d, d_v)
    cost ``2 s d (2 d_k + d_v)``: O(s d^2), linear in s. The scores and the weighted sum
    cost :func:`attention_flops` ``= 2 s^2 (d_k + d_v)``: O(s^2 d), quadratic in s. The
    quadratic part is the larger one once ``s > d (2 d_k + d_v) / (d_k + d_v)`` (that is
    s > 1.5 d when d_k = d_v = d). (An output projection W^O, chapter 4, adds
    ``2 s d_v d`` more.)

    Parameters
    ----------
    s : int
        Sequence length.
    d : int
        Model dimension (columns of X).
    d_k, d_v : int, optional
        Query/key and value dimensions; default d.

    Returns
    -------
    dict
        ``"projections"``, ``"attention"`` (scores and weighted sum), ``"total"``
        (ints), and ``"crossover"`` (float): the s above which ``"attention"`` is larger.
    """
    s, d = positive_int(s, "s"), positive_int(d, "d")
    d_k = d if d_k is None else positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else positive_int(d_v, "d_v")
    projections = 2 * s * d * (2 * d_k + d_v)
    attention = attention_flops(s, s, d_k, d_v)
    return {"projections": projections, "attention": attention,
            "total": projections + attention, "crossover": d * (2 * d_k + d_v) / (d_k + d_v)}


def score_matrix_bytes(s_q: int, s_k: int, itemsize: int = 4) -> int:
    """Bytes of one (s_q, s_k) score or weight matrix: ``s_q * s_k * itemsize``.

    Parameters
    ----------
    s_q, s_k : int
    itemsize : int
        Bytes per number: 4 for float32, 8 for float64.

    Returns
    -------
    int
    """
    return (positive_int(s_q, "s_q") * positive_int(s_k, "s_k")
            * positive_int(itemsize, "itemsize"))


#: OpenBLAS's thread setters and getters, by the names its builds export them under.
_OPENBLAS_NAMES = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
                   ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
                   ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
                   ("openblas_set_num_threads", "openblas_get_num_threads"))


@functools.lru_cache(maxsize=1)
def _openblas() -> tuple | None:
    """(set, get) of the OpenBLAS library this process has loaded (numpy's), or None."""
    try:
        maps = Path("/proc/self/maps").read_text()  # Linux: the loaded libraries
    except OSError:
        return None
    paths = dict.fromkeys(line.split()[-1] for line in maps.splitlines()
                          if "openblas" in line.lower() and ".so" in line)
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _OPENBLAS_NAMES:
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                getter = getattr(lib, get_name)
                getter.restype = ctypes.c_int
                return getattr(lib, set_name), getter
    return None


@contextmanager
def blas_threads(n: int = 1) -> Iterator[bool]:
    """Run numpy's matrix products on ``n`` threads inside the block.

    Sets the thread count of the OpenBLAS library numpy has loaded (through OpenBLAS's
    ``openblas_set_num_threads``) and restores it afterwards. Where no OpenBLAS can be
    found (another BLAS, or not Linux), it changes nothing.

    Yields
    ------
    bool
        Whether the thread count was set.
    """
    n = positive_int(n, "n")
    found = _openblas()
    if found is None:
        yield False
        return
    set_threads, get_threads = found
    before = get_threads()
    set_threads(n)
    try:
        yield True
    finally:
        set_threads(before)


def best_time(fn: Callable[[], object], *, repeats: int = 3, warmup: int = 1,
              min_seconds: float = 0.0, max_repeats: int = 200,
              clock: Callable[[], float] = time.perf_counter) -> float:
    """The fastest of several timed calls of ``fn()``, after ``warmup`` untimed calls.

    The first calls of a kernel pay one-time costs (thread pools started, memory mapped,
    code paths loaded), so they are run untimed first. Then ``fn`` is timed ``repeats``
    times, and more while less than ``min_seconds`` have been spent in total (at most
    ``max_repeats`` runs): fast calls get many tries, so that one of them runs undisturbed
    by other work on the machine. The minimum is the estimate least affected by noise.

    Parameters
    ----------
    fn : callable
        Called with no arguments.
    repeats : int
        Timed runs at least (>= 1).
    warmup : int
        Untimed runs first (>= 0).
    min_seconds : float
        Keep timing until this much time has been spent (>= 0).
    max_repeats : int
        Timed runs at most.
    clock : callable
        The clock: wall time (:func:`time.perf_counter`) or the calling thread's CPU
        time (:func:`time.thread_time`, blind to time spent waiting for a busy CPU, but
        also to work done on other threads).

    Returns
    -------
    float
        Seconds of the fastest run.
    """
    repeats = positive_int(repeats, "repeats")
    max_repeats = max(positive_int(max_repeats, "max_repeats"), repeats)
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a whole number >= 0, got {warmup!r}")
    if not min_seconds >= 0:
        raise ValueError(f"min_seconds must be >= 0, got {min_seconds!r}")
    for _ in range(warmup):
        fn()
    best, spent, runs = float("inf"), 0.0, 0
    while runs < repeats or (spent < min_seconds and runs < max_repeats):
        start = clock()
        fn()
        elapsed = clock() - start
        best, spent, runs = min(best, elapsed), spent + elapsed, runs + 1
    return best


def measure_attention(s: int, d_k: int = 64, *, repeats: int = 3, dtype=np.float32,
                      seed: int = 0, warmup: int = 1, min_seconds: float = 0.0,
                      one_thread: bool = True) -> dict:
    """Time and peak memory of :func:`~attention_book.attention.scaled_dot_product_attention`
    on random Q, K, V:(s, d_k).

    Parameters
    ----------
    s : int
        Sequence length (s_q = s_k = s).
    d_k : int
        Query, key and value dimension.
    repeats : int
        Runs timed at least; the fastest is reported (see :func:`best_time`).
    dtype : numpy dtype
        float32 (as in torch) or float64.
    seed : int
        Seed of Q, K, V.
    warmup : int
        Untimed runs first.
    min_seconds : float
        Keep timing until this much time has been spent.
    one_thread : bool
        Run on one thread (:func:`blas_threads`) and time with that thread's CPU clock
        (:func:`time.thread_time`); if the BLAS's threads cannot be set, or with False,
        wall time (:func:`time.perf_counter`) on the BLAS's own threads.

    Returns
    -------
    dict
        ``"s"``, ``"seconds"`` (fastest run), ``"peak_bytes"`` (tracemalloc peak of one
        run, beyond the inputs), ``"score_bytes"`` (one (s, s) matrix of ``dtype``),
        ``"clock"`` ("thread CPU" or "wall").
    """
    s = positive_int(s, "s")
    d_k = positive_int(d_k, "d_k")
    repeats = positive_int(repeats, "repeats")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((s, d_k)).astype(dtype) for _ in range(3))  # (s, d_k)
    with blas_threads(1) if one_thread else nullcontext(False) as pinned:
        best = best_time(lambda: scaled_dot_product_attention(Q, K, V), repeats=repeats,
                         warmup=warmup, min_seconds=min_seconds,
                         clock=time.thread_time if pinned else time.perf_counter)
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        scaled_dot_product_attention(Q, K, V)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return {"s": s, "seconds": best, "peak_bytes": int(peak),
            "score_bytes": score_matrix_bytes(s, s, dtype.itemsize),
            "clock": "thread CPU" if pinned else "wall"}


def cache_sizes(cpu: int = 0, root: str | Path = "/sys/devices/system/cpu") -> dict:
    """The data cache sizes of one CPU, as Linux reports them.

    Reads ``{root}/cpu{cpu}/cache/index*/{level,type,size}``.

    Parameters
    ----------
    cpu : int
        Which CPU.
    root : str or Path
        Where the CPU directories are (for tests).

    Returns
    -------
    dict of str to int
        Bytes per level, e.g. ``{"L1": 49152, "L2": 1048576, "L3": 33554432}`` (data and
        unified caches only); empty where the system does not say (not Linux).
    """
    sizes = {}
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    for index in sorted(Path(root, f"cpu{int(cpu)}", "cache").glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            text = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or not text:
            continue
        number, unit = (text[:-1], text[-1]) if text[-1] in units else (text, "")
        try:
            sizes[f"L{level}"] = int(number) * units.get(unit, 1)
        except ValueError:
            continue
    return sizes


def growth_exponents(sizes: Sequence[float], values: Sequence[float]) -> np.ndarray:
    """The local slopes of ``values`` against ``sizes`` on log-log axes.

    Between successive points, ``log(v2 / v1) / log(s2 / s1)``: 2 where doubling the size
    quadruples the value (v ~ s^2), 1 where it doubles it.

    Parameters
    ----------
    sizes, values : sequence of float, length n >= 2
        Positive; sizes increasing.

    Returns
    -------
    numpy.ndarray, shape (n - 1,)
    """
    s = np.asarray(sizes, dtype=float)  # (n,)
    v = np.asarray(values, dtype=float)  # (n,)
    if s.ndim != 1 or s.shape != v.shape or len(s) < 2:
        raise ValueError(f"need two 1-d sequences of the same length >= 2, got {s.shape} "
                         f"and {v.shape}")
    if (s <= 0).any() or (v <= 0).any() or (np.diff(s) <= 0).any():
        raise ValueError("sizes and values must be positive, sizes increasing")
    return np.diff(np.log(v)) / np.diff(np.log(s))  # (n - 1,)


# ------------------------------------------------ self-attention vs recurrent vs convolution

#: The layer types of the comparison (Vaswani et al. 2017, Table 1).
LAYER_KINDS = ("self-attention", "recurrent", "convolutional")


def _kind(kind: str) -> str:
    if kind not in LAYER_KINDS:
        raise ValueError(f"kind must be one of {LAYER_KINDS}, got {kind!r}")
    return kind


def dependency_graph(kind: str, s: int, k: int = 3, layers: int = 1,
                     dilated: bool = True) -> dict:
    """Which node each node of a stack of layers is computed from, over s positions.

    Nodes are ``(layer, position)``: layer 0 holds the inputs x_0..x_{s-1}, layer l the
    outputs of the l-th layer. Edges point from a node to the nodes it reads:

    - **self-attention**: (l, j) reads every (l-1, i), i = 0..s-1 (no mask);
    - **recurrent**: (l, t) reads (l-1, t) and the previous state (l, t-1); (l, 0) reads
      the initial state ``(l, -1)``, a node with no inputs of its own;
    - **convolutional**: (l, p) reads (l-1, p - m r) for m = 0..k-1 (a causal kernel of
      width k), with dilation r = k^(l-1) when ``dilated`` (WaveNet, ByteNet), else 1;
      taps before position 0 read padding and are left out.

    Parameters
    ----------
    kind : {"self-attention", "recurrent", "convolutional"}
    s : int
        Sequence length.
    k : int
        Kernel width of the convolution (at least 2; ignored by the other kinds).
    layers : int
        Layers stacked.
    dilated : bool
        Dilate the convolution's kernel by k^(l-1) in layer l.

    Returns
    -------
    dict
        ``{node: [nodes it reads]}`` for every node of layers 1..``layers`` (and the
        recurrent initial states); nodes of layer 0 read nothing and are not keys.
    """
    kind, s, layers = _kind(kind), positive_int(s, "s"), positive_int(layers, "layers")
    k = positive_int(k, "k")
    if k < 2:
        raise ValueError(f"k must be at least 2 for a kernel to widen, got {k}")
    graph = {}
    for layer in range(1, layers + 1):
        if kind == "recurrent":
            graph[(layer, -1)] = []  # the initial state h_{-1}
        rate = k ** (layer - 1) if dilated else 1
        for p in range(s):
            if kind == "self-attention":
                graph[(layer, p)] = [(layer - 1, i) for i in range(s)]
            elif kind == "recurrent":
                graph[(layer, p)] = [(layer - 1, p), (layer, p - 1)]
            else:
                graph[(layer, p)] = [(layer - 1, p - m * rate) for m in range(k)
                                     if p - m * rate >= 0]
    return graph


def layer_operations(kind: str, s: int, d: int, k: int = 3, *, projections: bool = True,
                     gates: int = 1) -> int:
    """Multiplications of one layer of width d over s positions, counted on its graph.

    Every edge of :func:`dependency_graph` (one layer) is one piece of work. In
    self-attention an edge i -> j is the score q_j . k_i (d multiplications) and the
    weighted value alpha_ji v_i (d more): 2 d an edge, s^2 edges, 2 s^2 d in all. In a
    recurrent layer, h_t = f(W h_{t-1} + U x_t), the edge from h_{t-1} is W times a vector
    and the edge from x_t is U times a vector: d^2 each (``gates`` times that for a layer
    with several gates, each with its own W and U: 4 for an LSTM). A convolution has one
    (d, d) matrix per tap: d^2 an edge, about k s d^2.

    Both layers read their input through (d, d) matrices before mixing positions:
    self-attention through W^Q, W^K, W^V (3 d^2 a position), the recurrent layer through
    U. ``projections`` counts those input matrices for both, or for neither, so that the
    two counts compare like with like:

    - ``projections=True`` (all the work): self-attention 2 s^2 d + 3 s d^2, recurrent
      2 g s d^2 (W and U);
    - ``projections=False`` (only the mixing of positions): self-attention 2 s^2 d,
      recurrent g s d^2 (W alone).

    The convolution's taps are both its input matrices and its mixing, so its count is
    the same either way. (Vaswani et al.'s Table 1 gives orders only: O(s^2 d) for
    self-attention, O(s d^2) for the recurrent layer.)

    Parameters
    ----------
    kind : {"self-attention", "recurrent", "convolutional"}
    s, d : int
        Sequence length and width.
    k : int
        Kernel width of the convolution.
    projections : bool
        Count the layers' input matrices (W^Q, W^K, W^V; U), or leave both out.
    gates : int
        Gates of the recurrent layer, each with its own W and U (1: a plain recurrent
        layer; 4: an LSTM). Ignored by the other kinds.

    Returns
    -------
    int
    """
    kind, s, d = _kind(kind), positive_int(s, "s"), positive_int(d, "d")
    gates = positive_int(gates, "gates")
    if not isinstance(projections, (bool, np.bool_)):
        raise ValueError(f"projections must be True or False, got {projections!r}")
    graph = dependency_graph(kind, s, k)
    if kind == "self-attention":
        edges = sum(len(reads) for reads in graph.values())
        return edges * 2 * d + (3 * s * d * d if projections else 0)
    if kind == "convolutional":
        return sum(len(reads) for reads in graph.values()) * d * d
    # recurrent: an edge from the state (same layer) is W, from the input (layer below) U
    edges = sum(1 for node, reads in graph.items() for r in reads
                if projections or r[0] == node[0])
    return edges * gates * d * d


def attention_cheaper_below(d: int, *, projections: bool = True, gates: int = 1) -> float:
    """The sequence lengths at which self-attention does fewer multiplications than a
    recurrent layer of the same width: exactly the s with ``s < attention_cheaper_below(d)``.

    From the counts of :func:`layer_operations`, with p = 1 when the input matrices are
    counted and 0 when not: self-attention 2 s^2 d + 3 p s d^2 against recurrent
    g (1 + p) s d^2, so attention is cheaper exactly when s < (g (1 + p) - 3 p) d / 2:

    ====================  ===========  =============
    count                 plain (g=1)  LSTM (g=4)
    ====================  ===========  =============
    all the work (p=1)    never (0)    s < 2.5 d
    mixing only (p=0)     s < d / 2    s < 2 d
    ====================  ===========  =============

    The paper's orders, O(s^2 d) against O(s d^2), say "when s is smaller than d"; the
    constants, and what is counted, move that line by a factor of up to 2.5, or remove it.

    Parameters
    ----------
    d : int
        Width of both layers.
    projections, gates
        As in :func:`layer_operations`.

    Returns
    -------
    float
        The bound (0.0 when self-attention is never cheaper).
    """
    d, gates = positive_int(d, "d"), positive_int(gates, "gates")
    if not isinstance(projections, (bool, np.bool_)):
        raise ValueError(f"projections must be True or False, got {projections!r}")
    p = int(projections)
    return max(0.0, (gates * (1 + p) - 3 * p) * d / 2)


def _depths(graph: dict) -> dict:
    """Round in which each node can be computed if every node starts as soon as the nodes
    it reads are done: 0 for inputs and initial states, else 1 + the latest it reads."""
    depth = {}
    for node in sorted(graph, key=lambda n: (n[0], n[1])):  # layer by layer, left to right
        depth[node] = 1 + max((depth.get(r, 0) for r in graph[node]), default=-1)
    return depth


def sequential_operations(kind: str, s: int, k: int = 3) -> int:
    """The steps one layer needs one after another, with unlimited parallel hardware.

    The depth of the layer's :func:`dependency_graph`: each node can be computed once
    every node it reads is done. Self-attention and a convolution compute every position
    at once (1 step); a recurrent layer must finish h_{t-1} before h_t (s steps).

    Parameters
    ----------
    kind : {"self-attention", "recurrent", "convolutional"}
    s : int
    k : int

    Returns
    -------
    int
    """
    graph = dependency_graph(kind, s, k)
    depth = _depths(graph)
    return max(depth[(1, p)] for p in range(positive_int(s, "s")))


def _shortest_from(edges: dict, source: tuple) -> dict:
    """Breadth-first search from ``source`` along ``edges`` ({node: [next nodes]}).
    Returns {node reached: number of edges}."""
    dist, frontier = {source: 0}, [source]
    while frontier:
        nxt = []
        for node in frontier:
            for other in edges.get(node, ()):
                if other not in dist:
                    dist[other] = dist[node] + 1
                    nxt.append(other)
        frontier = nxt
    return dist


def _readers(graph: dict) -> dict:
    """The graph's edges turned round: {node: [nodes that read it]}."""
    readers = {}
    for node, reads in graph.items():
        for r in reads:
            readers.setdefault(r, []).append(node)
    return readers


def layers_to_connect(kind: str, s: int, k: int = 3, dilated: bool = True) -> int:
    """The fewest stacked layers after which the last output depends on every input.

    One layer of self-attention or recurrence already connects them; causal
    convolutions need about log_k s dilated layers (the receptive field multiplies by k
    each layer) or (s - 1)/(k - 1) contiguous ones (it grows by k - 1). Found by stacking
    layers until a breadth-first search back from the last output reaches every input.
    Remembered for each (kind, s, k, dilated): :func:`maximum_path_length` asks again, and
    contiguous kernels over 100 positions take 50 searches (0.26 s).

    Parameters
    ----------
    kind : {"self-attention", "recurrent", "convolutional"}
    s : int
        Sequence length.
    k : int
        Kernel width of the convolution.
    dilated : bool
        Dilated (True) or contiguous (False) convolution kernels.

    Returns
    -------
    int
    """
    return _layers_to_connect(_kind(kind), positive_int(s, "s"), positive_int(k, "k"),
                              bool(dilated))


@functools.lru_cache(maxsize=256)
def _layers_to_connect(kind: str, s: int, k: int, dilated: bool) -> int:
    """:func:`layers_to_connect`, its arguments positional (one key per question)."""
    layers = 1
    while True:
        graph = dependency_graph(kind, s, k, layers, dilated)
        seen = _shortest_from(graph, (layers, s - 1))  # backwards: along "reads"
        if all((0, i) in seen for i in range(s)):
            return layers
        layers += 1


def maximum_path_length(kind: str, s: int, k: int = 3, dilated: bool = True) -> int:
    """The longest shortest path from an input to an output that depends on it.

    Measured by breadth-first search on :func:`dependency_graph`, stacked
    :func:`layers_to_connect` layers high so that every pair can be linked: the number
    of edges a signal crosses between input position i and output position j, maximised
    over the pairs (i, j) that are connected. Short paths make long-range dependencies
    easier to learn (Vaswani et al. 2017, section 4). Self-attention: 1; recurrent: s
    (x_0 -> h_0 -> h_1 ... -> h_{s-1}); dilated convolution: the number of layers,
    about log_k s.

    Parameters
    ----------
    kind : {"self-attention", "recurrent", "convolutional"}
    s : int
        Sequence length (at least 1).
    k : int
        Kernel width of the convolution.
    dilated : bool
        Dilated (True) or contiguous (False) convolution kernels.

    Returns
    -------
    int
    """
    s = positive_int(s, "s")
    layers = layers_to_connect(kind, s, k, dilated)
    readers = _readers(dependency_graph(kind, s, k, layers, dilated))
    outputs = {(layers, j) for j in range(s)}
    longest = 0
    for i in range(s):
        dist = _shortest_from(readers, (0, i))  # forwards: along "is read by"
        longest = max([longest, *(n for node, n in dist.items() if node in outputs)])
    return longest


def layer_comparison(s: int, d: int, k: int = 3, *, projections: bool = True) -> dict:
    """Vaswani et al.'s Table 1, computed for one (s, d, k): for each layer kind, the
    multiplications of one layer (:func:`layer_operations`, with or without the layers'
    input matrices), its sequential steps and the maximum path length.

    Parameters
    ----------
    s, d : int
        Sequence length and width.
    k : int
        Kernel width of the convolution.
    projections : bool
        Count the layers' input matrices (as :func:`layer_operations`).

    Returns
    -------
    dict
        ``{kind: {"operations": int, "sequential": int, "path": int}}`` for each kind of
        :data:`LAYER_KINDS` (convolutions dilated).
    """
    return {kind: {"operations": layer_operations(kind, s, d, k, projections=projections),
                   "sequential": sequential_operations(kind, s, k),
                   "path": maximum_path_length(kind, s, k)} for kind in LAYER_KINDS}
