"""Input checks shared by the math layer.

Every message names the argument, the shape or value that was expected and the one that
was given, so that a learner who passes the wrong thing knows what to change.
"""

from __future__ import annotations

import numpy as np


#: The dtypes :func:`as_float_array` returns as they are.
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def as_float_array(x, name: str, min_ndim: int = 1, allow_neg_inf: bool = False) -> np.ndarray:
    """Return ``x`` as a floating-point array, refusing NaN, infinity and too few axes.

    Parameters
    ----------
    x : array_like
        The value to check.
    name : str
        The argument's name, used in the error message.
    min_ndim : int
        The fewest axes ``x`` may have.
    allow_neg_inf : bool
        Accept -inf (how masked logits look); NaN and +inf are still refused.

    Returns
    -------
    numpy.ndarray
        ``x`` itself when it is already float32 or float64, otherwise a float64 copy.
    """
    if (type(x) is np.ndarray and x.dtype in _FLOATS and x.ndim >= min_ndim
            and np.isfinite(x).all()):
        # the common case, a finite float array, in a quarter of the checks' time below
        # (the numpy decoder and the head removals call this half a million times)
        return x
    try:
        arr = np.asarray(x)
    except Exception as err:  # ragged lists and the like
        raise ValueError(f"{name} must be an array of numbers: {err}") from None
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or arr.dtype == bool
    ):
        raise ValueError(f"{name} must be an array of numbers, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} must be real, got a complex array")
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} axes, got shape {arr.shape}"
        )
    if allow_neg_inf:
        if np.isnan(arr).any() or np.isposinf(arr).any():
            bad = "NaN" if np.isnan(arr).any() else "+inf"
            raise ValueError(f"{name} contains {bad}; entries must be numbers or -inf")
    elif not np.all(np.isfinite(arr)):
        bad = "NaN" if np.isnan(arr).any() else "infinity"
        raise ValueError(f"{name} contains {bad}; every entry must be a finite number")
    return arr


def positive_int(value, name: str) -> int:
    """Return ``value`` as an int, refusing anything that is not a whole number >= 1."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return int(value)


def whole_number(value, name: str, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int, refusing non-integers (and bools) and values outside
    ``low..high`` (either bound may be None)."""
    bounds = (f" in {low}..{high}" if low is not None and high is not None
              else f" >= {low}" if low is not None
              else f" <= {high}" if high is not None else "")
    if (isinstance(value, bool) or not isinstance(value, (int, np.integer))
            or (low is not None and value < low) or (high is not None and value > high)):
        raise ValueError(f"{name} must be a whole number{bounds}, got {value!r}")
    return int(value)


def batch_shape(**shapes) -> tuple:
    """Broadcast the leading (batch) axes of the named arrays, or explain why not."""
    try:
        return np.broadcast_shapes(*(s[:-2] for s in shapes.values()))
    except ValueError:
        listed = ", ".join(f"{n} has shape {s}" for n, s in shapes.items())
        raise ValueError(
            f"the leading (batch) axes do not broadcast: {listed}; all axes before "
            f"the last two must be equal or 1"
        ) from None


def check_mask(mask, scores_shape: tuple) -> np.ndarray:
    """Return ``mask`` as a bool array broadcastable to ``scores_shape`` (..., s_q, s_k),
    or explain (True = may attend) why it is not one."""
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError(
            f"mask must be boolean with True = may attend (PyTorch SDPA convention), "
            f"got dtype {mask.dtype}; build it with a comparison, e.g. causal_mask(s), "
            f"or convert a 0/1 array with mask.astype(bool)"
        )
    s_q, s_k = scores_shape[-2:]
    try:
        full = np.broadcast_shapes(mask.shape, scores_shape)
    except ValueError:
        full = None
    if full is None or full[-2:] != (s_q, s_k):
        raise ValueError(
            f"mask has shape {mask.shape} but the scores have shape {scores_shape} "
            f"(..., s_q={s_q}, s_k={s_k}): mask must broadcast to (..., {s_q}, {s_k})"
        )
    return mask
