"""torch_sdpa_peak_bytes: what torch's CPU attention kernels hold at once, by its profiler."""

import pytest

from attention_book.reference import torch_sdpa_peak_bytes


def test_the_math_kernel_holds_about_two_and_a_quarter_score_matrices():
    """Scores, weights and a boolean (s, s) mask: 2.25 float32 (s, s) matrices, plus the
    (s, d_k) arrays, a share that shrinks as s grows."""
    shares = [torch_sdpa_peak_bytes(s) / (4 * s * s) for s in (256, 512, 1024)]
    assert all(2.25 <= share < 2.6 for share in shares), shares
    assert shares[0] > shares[1] > shares[2]  # towards 2.25 from above


def test_the_fused_kernel_never_holds_the_whole_matrix():
    held = {s: torch_sdpa_peak_bytes(s, fused=True) for s in (512, 2048)}
    assert held[2048] < 0.2 * 4 * 2048**2
    assert held[2048] < 8 * held[512]  # 16 times the scores, far less than 16 times the memory


def test_the_profiler_writes_nothing_to_stderr(capfd):
    torch_sdpa_peak_bytes(64)
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("args, message", [((0,), "s must be"), ((8, 0), "d_k must be"),
                                           ((2.5,), "s must be")])
def test_bad_sizes_get_a_clear_error(args, message):
    with pytest.raises(ValueError, match=message):
        torch_sdpa_peak_bytes(*args)
