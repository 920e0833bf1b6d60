"""Many small arrays compared with one numpy call: the parity tests compare a thousand states
of a dozen arrays each, and ``np.testing.assert_allclose`` on each pair cost more than the
comparison itself (1.8 s of test_web_pretrained's presets)."""
from __future__ import annotations

import numpy as np


class CloseAll:
    """Pairs (got, want) within ``atol`` (absolute), checked at once by :meth:`check`, as
    ``np.testing.assert_allclose(got, want, atol=atol, rtol=0)`` checks each: the same shape,
    and equal, both NaN or within ``atol`` everywhere. A failure names the first pair that
    differs (its ``where``) and the largest difference there."""

    def __init__(self, atol: float):
        self.atol = atol
        self.got: list[np.ndarray] = []
        self.want: list[np.ndarray] = []
        self.where: list = []

    def add(self, got, want, where) -> None:
        got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        assert got.shape == want.shape, (where, got.shape, want.shape)
        self.got.append(got.ravel())
        self.want.append(want.ravel())
        self.where.append(where)

    def check(self) -> float:
        """Assert every pair is close; return the largest difference (NaN pairs left out)."""
        if not self.got:
            return 0.0
        got, want = np.concatenate(self.got), np.concatenate(self.want)
        with np.errstate(invalid="ignore"):  # inf - inf
            diff = np.abs(got - want)
            ok = (got == want) | (diff <= self.atol) | (np.isnan(got) & np.isnan(want))
        if not ok.all():
            first = int(np.argmin(ok))
            ends = np.cumsum([a.size for a in self.got])
            k = int(np.searchsorted(ends, first, side="right"))
            g, w = self.got[k], self.want[k]
            raise AssertionError(f"not within {self.atol}: {self.where[k]}: largest difference "
                                 f"{np.nanmax(np.abs(g - w))}\n got {g[:8]}...\nwant {w[:8]}...")
        return float(np.max(diff, initial=0.0, where=~np.isnan(diff)))
