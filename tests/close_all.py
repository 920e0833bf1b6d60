"""``np.testing.assert_allclose`` for the parity tests' many small arrays: a thousand states
of a dozen arrays each, where its checks and message building cost more than the comparison
(about 0.5 ms a call)."""
from __future__ import annotations

import numpy as np


def assert_close(got, want, *, atol: float = 0.0, rtol: float = 0.0, err_msg="") -> None:
    """``np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, err_msg=err_msg)``,
    answered by one numpy expression when the arrays have one shape and are equal, both NaN
    or within ``atol + rtol * |want|`` everywhere (then assert_allclose passes too); in any
    other case assert_allclose itself decides and writes the message."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape == want.shape:
        with np.errstate(invalid="ignore"):  # inf - inf
            ok = ((got == want) | (np.abs(got - want) <= atol + rtol * np.abs(want))
                  | (np.isnan(got) & np.isnan(want)))
        if ok.all():
            return
    np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, err_msg=str(err_msg))
