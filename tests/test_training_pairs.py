"""next_token_pairs: a text's ids cut into (input, target) windows, checked against torch."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attention_book.tokens import RUNNING_IDS, next_token_pairs


def test_running_sentence_in_windows_of_two():
    inputs, targets = next_token_pairs(RUNNING_IDS, 2)
    assert inputs.tolist() == [[105, 12], [24, 107]]
    assert targets.tolist() == [[12, 24], [107, 57]]
    assert inputs.dtype == targets.dtype == np.int64


@given(n=st.integers(2, 60), context=st.integers(1, 12), stride=st.integers(1, 12))
def test_windows_are_torch_unfold_shifted_by_one(n, context, stride):
    """Window k is ids[k*stride : k*stride + s + 1] split into its first s and last s ids,
    which is what torch's unfold cuts; every window whose target fits is there."""
    ids = np.random.default_rng(n).integers(0, 1000, n)
    if n < context + 1:
        with pytest.raises(ValueError, match="needs"):
            next_token_pairs(ids, context, stride)
        return
    inputs, targets = next_token_pairs(ids, context, stride)
    windows = torch.from_numpy(ids).unfold(0, context + 1, stride).numpy()  # (m, s + 1)
    assert np.array_equal(inputs, windows[:, :-1]) and np.array_equal(targets, windows[:, 1:])
    assert np.array_equal(inputs[:, 1:], targets[:, :-1])  # the target is the next input
    assert len(inputs) == (n - 1 - context) // stride + 1


@pytest.mark.parametrize("args, message", [
    (([1, 2, 3], 0), "context must be a whole number >= 1"),
    (([1, 2, 3], 2, 0), "stride must be a whole number >= 1"),
    (([1, 2, 3], 2.5), "context must be a whole number"),
    (([1, 2], 2), "needs 3 ids"),
    (([[1, 2, 3]], 1), "1-D array of integers"),
    (([0.5, 1.5, 2.5], 1), "1-D array of integers"),
])
def test_bad_input_gets_a_clear_error(args, message):
    with pytest.raises(ValueError, match=message):
        next_token_pairs(*args)
