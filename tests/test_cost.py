"""cost.py: the counts (projections and attention), the timing helper, the thread pinning,
the cache sizes and the growth exponents."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from attention_book import cost as C


def test_layer_flops_split_into_projections_and_attention():
    s, d = 10, 8
    flops = C.attention_layer_flops(s, d)
    assert flops["projections"] == 3 * 2 * s * d * d  # X W^Q, X W^K, X W^V: (s, d) @ (d, d)
    assert flops["attention"] == C.attention_flops(s, s, d) == 4 * s * s * d
    assert flops["total"] == flops["projections"] + flops["attention"]
    assert flops["crossover"] == pytest.approx(1.5 * d)
    # below the crossover the projections cost more, above it the scores do
    for s_len, bigger in ((11, "projections"), (13, "attention")):
        f = C.attention_layer_flops(s_len, d)
        other = "attention" if bigger == "projections" else "projections"
        assert f[bigger] > f[other]
    odd = C.attention_layer_flops(5, 16, 4, 6)
    assert odd["projections"] == 2 * 5 * 16 * (4 + 4 + 6)
    assert odd["crossover"] == pytest.approx(16 * 14 / 10)
    with pytest.raises(ValueError, match="d must be at least 1"):
        C.attention_layer_flops(4, 0)


def test_best_time_warms_up_repeats_and_keeps_the_minimum():
    calls = []
    durations = iter([0.5, 0.25, 0.375, 0.125] + [1.0] * 100)
    fake_now = [0.0]

    def clock():
        return fake_now[0]

    def fn():
        calls.append(1)
        fake_now[0] += next(durations)

    best = C.best_time(fn, repeats=2, warmup=1, clock=clock)
    assert len(calls) == 3 and best == 0.25  # the warm-up's 0.5 is not counted
    calls.clear()
    best = C.best_time(fn, repeats=1, warmup=0, min_seconds=2.5, clock=clock)
    assert best == 0.125 and len(calls) == 4  # 0.125 + 1 + 1 + 1 >= 2.5
    calls.clear()
    C.best_time(lambda: calls.append(1), repeats=1, warmup=0, min_seconds=10.0,
                max_repeats=7)
    assert len(calls) == 7
    with pytest.raises(ValueError, match="warmup"):
        C.best_time(fn, warmup=-1)
    with pytest.raises(ValueError, match="repeats"):
        C.best_time(fn, repeats=0)


def _blas_threads_now() -> int:
    """The thread count of numpy's OpenBLAS, read by threadpoolctl (not by cost.py)."""
    from threadpoolctl import threadpool_info

    counts = {i["num_threads"] for i in threadpool_info() if i["internal_api"] == "openblas"}
    assert len(counts) == 1, threadpool_info()  # numpy's wheel loads one OpenBLAS
    return counts.pop()


def test_blas_threads_sets_and_restores():
    """Inside the block the count is n, after it what it was, nested blocks too (a mutant that
    neither sets nor restores fails: it asserted only a bool before)."""
    a = np.ones((64, 64))
    outside = _blas_threads_now()  # 1 under make (OPENBLAS_NUM_THREADS), else the cores
    inner, other = (2, 1) if outside == 1 else (1, 2)  # counts differing from it and each other
    with C.blas_threads(inner) as pinned:
        assert pinned is True and _blas_threads_now() == inner
        np.testing.assert_allclose(a @ a, 64.0)
        with C.blas_threads(other):
            assert _blas_threads_now() == other
        assert _blas_threads_now() == inner
    assert _blas_threads_now() == outside
    with pytest.raises(RuntimeError), C.blas_threads(inner):
        assert _blas_threads_now() == inner
        raise RuntimeError  # restored when the block fails too
    assert _blas_threads_now() == outside
    with pytest.raises(ValueError), C.blas_threads(0):
        pass


def test_measure_attention_reports_its_clock():
    r = C.measure_attention(64, 8, repeats=2)
    assert r["clock"] in ("thread CPU", "wall") and r["seconds"] > 0
    assert C.measure_attention(64, 8, repeats=1, one_thread=False)["clock"] == "wall"


def test_cache_sizes_read_from_sysfs(tmp_path):
    for index, (level, kind, size) in enumerate(
            [(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "1024K"),
             (3, "Unified", "32M"), (4, "Unified", "")]):
        folder = tmp_path / "cpu0" / "cache" / f"index{index}"
        folder.mkdir(parents=True)
        (folder / "level").write_text(f"{level}\n")
        (folder / "type").write_text(f"{kind}\n")
        (folder / "size").write_text(f"{size}\n")
    assert C.cache_sizes(root=tmp_path) == {"L1": 48 * 2**10, "L2": 2**20, "L3": 32 * 2**20}
    assert C.cache_sizes(root=tmp_path / "nowhere") == {}
    real = C.cache_sizes()
    assert all(isinstance(v, int) and v > 0 for v in real.values())


def test_growth_exponents():
    s = np.array([128, 256, 512, 1024])
    np.testing.assert_allclose(C.growth_exponents(s, 3.0 * s ** 2), 2.0)
    np.testing.assert_allclose(C.growth_exponents(s, s), 1.0)
    assert C.growth_exponents([1, 4], [2, 32])[0] == pytest.approx(math.log(16) / math.log(4))
    with pytest.raises(ValueError, match="same length"):
        C.growth_exponents([1, 2], [1])
    with pytest.raises(ValueError, match="positive"):
        C.growth_exponents([1, 2], [0, 1])


def test_one_thread_timing_is_stable_for_small_calls():
    # the minimum of many short runs: two measurements of the same call agree
    a = C.measure_attention(128, 64, repeats=5, min_seconds=0.02)["seconds"]
    b = C.measure_attention(128, 64, repeats=5, min_seconds=0.02)["seconds"]
    assert 0.33 < a / b < 3.0
    assert time.thread_time() > 0


def test_torch_timing_uses_the_fused_kernel_only_with_4d_inputs():
    import warnings

    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from attention_book.reference import time_torch_sdpa

    q4 = torch.randn(1, 1, 64, 8)  # (batch, heads, s, d_k): what the fused kernel takes
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        torch.nn.functional.scaled_dot_product_attention(q4, q4, q4)  # runs fused
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError):  # (s, d_k): no fused kernel for 2-D inputs
                torch.nn.functional.scaled_dot_product_attention(q4[0, 0], q4[0, 0], q4[0, 0])
    threads = torch.get_num_threads()
    for fused in (True, False):
        r = time_torch_sdpa(64, 8, repeats=2, fused=fused)
        assert r["seconds"] > 0 and r["clock"] == "thread CPU"
    assert torch.get_num_threads() == threads  # restored


# ------------------------------------------------ Table 1: attention vs recurrent vs convolution

from hypothesis import given, settings
from hypothesis import strategies as st


def smallest_power_reaching(k, s):
    """The fewest layers L >= 1 with k^L >= s (integers only, no floating-point log)."""
    layers = 1
    while k ** layers < s:
        layers += 1
    return layers


def test_dependency_graphs_have_the_edges_each_layer_reads():
    att = C.dependency_graph("self-attention", 4)
    assert att[(1, 2)] == [(0, 0), (0, 1), (0, 2), (0, 3)]
    rnn = C.dependency_graph("recurrent", 4)
    assert rnn[(1, 0)] == [(0, 0), (1, -1)] and rnn[(1, 3)] == [(0, 3), (1, 2)]
    assert rnn[(1, -1)] == []  # the initial state reads nothing
    conv = C.dependency_graph("convolutional", 10, k=3, layers=2)
    assert conv[(1, 5)] == [(0, 5), (0, 4), (0, 3)]  # dilation 1
    assert conv[(2, 9)] == [(1, 9), (1, 6), (1, 3)]  # dilation 3
    assert conv[(1, 0)] == [(0, 0)]  # padding left out
    assert C.dependency_graph("convolutional", 10, 3, 2, dilated=False)[(2, 9)] == [
        (1, 9), (1, 8), (1, 7)]


@settings(max_examples=40, deadline=None)
@given(s=st.integers(1, 30), d=st.integers(1, 64), k=st.integers(2, 5), gates=st.sampled_from([1, 4]))
def test_operation_counts_compare_like_with_like(s, d, k, gates):
    ops = lambda kind, **kw: C.layer_operations(kind, s, d, k, **kw)
    # all the work: attention's W^Q, W^K, W^V counted as the recurrent layer's U is
    assert ops("self-attention") == 2 * s * s * d + 3 * s * d * d
    assert ops("recurrent", gates=gates) == 2 * gates * s * d * d  # W h_{t-1} and U x_t
    # only the mixing of positions: neither layer's input matrices
    assert ops("self-attention", projections=False) == 2 * s * s * d
    assert ops("recurrent", projections=False, gates=gates) == gates * s * d * d  # W alone
    taps = sum(min(p + 1, k) for p in range(s))  # causal kernel, padding left out
    for projections in (True, False):
        assert ops("convolutional", projections=projections) == taps * d * d <= k * s * d * d
        # attention is cheaper exactly below the bound, whatever is counted
        bound = C.attention_cheaper_below(d, projections=projections, gates=gates)
        assert (ops("self-attention", projections=projections)
                < ops("recurrent", projections=projections, gates=gates)) == (s < bound)


def test_where_attention_is_cheaper_than_recurrence():
    d = 64
    assert C.attention_cheaper_below(d) == 0.0  # all the work, plain recurrent: never
    assert C.attention_cheaper_below(d, projections=False) == d / 2
    assert C.attention_cheaper_below(d, gates=4) == 2.5 * d  # an LSTM's four gates
    assert C.attention_cheaper_below(d, projections=False, gates=4) == 2 * d
    # the uneven count (attention's projections out, the recurrent layer's U in) gave s < d
    assert all((C.layer_operations("self-attention", s, d, projections=False)
                < C.layer_operations("recurrent", s, d)) == (s < d) for s in range(1, 3 * d))
    with pytest.raises(ValueError, match="projections must be True or False"):
        C.layer_operations("recurrent", 4, 4, projections="yes")
    with pytest.raises(ValueError, match="gates must be"):
        C.attention_cheaper_below(8, gates=0)


@settings(max_examples=30, deadline=None)
@given(s=st.integers(1, 40), k=st.integers(2, 5))
def test_sequential_steps_and_path_lengths(s, k):
    assert C.sequential_operations("self-attention", s, k) == 1
    assert C.sequential_operations("recurrent", s, k) == s
    assert C.sequential_operations("convolutional", s, k) == 1
    assert C.maximum_path_length("self-attention", s, k) == 1
    assert C.maximum_path_length("recurrent", s, k) == s
    assert C.maximum_path_length("convolutional", s, k) == smallest_power_reaching(k, s)
    contiguous = max(1, -(-(s - 1) // (k - 1)))  # ceil((s - 1) / (k - 1))
    assert C.layers_to_connect("convolutional", s, k, dilated=False) == contiguous
    assert C.maximum_path_length("convolutional", s, k, dilated=False) == contiguous


def test_layer_comparison_and_bad_input():
    table = C.layer_comparison(9, 16, 3)
    assert set(table) == set(C.LAYER_KINDS)
    assert table["self-attention"] == {"operations": 2 * 81 * 16 + 3 * 9 * 256, "sequential": 1,
                                       "path": 1}
    assert C.layer_comparison(9, 16, 3, projections=False)["self-attention"]["operations"] \
        == 2 * 81 * 16
    assert table["recurrent"] == {"operations": 2 * 9 * 256, "sequential": 9, "path": 9}
    assert table["convolutional"]["path"] == 2  # 3^2 = 9 positions in two dilated layers
    with pytest.raises(ValueError, match="kind must be one of"):
        C.dependency_graph("lstm", 4)
    with pytest.raises(ValueError, match="k must be at least 2"):
        C.dependency_graph("convolutional", 4, k=1)
    with pytest.raises(ValueError, match="s must be"):
        C.layer_operations("recurrent", 0, 4)
