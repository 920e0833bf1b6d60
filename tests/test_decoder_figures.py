"""Chapter 10's figures (plots/decoder.py) pass chapter figures' legibility checks
(tests/test_figure_text.py: no overlapping or tiny text, labels next to their ticks), drawn
from data shaped like the chapter's: 30 layers by 9 heads, 40 distances, 6 removals."""

import numpy as np
import pytest

from attention_book import plots
from test_figure_text import problems

pytestmark = pytest.mark.slow  # draws figures, as test_figure_text does


def figures() -> dict:
    rng = np.random.default_rng(0)
    grids = {name: rng.uniform(size=(30, 9)) for name in ("previous token", "first token",
                                                         "induction")}
    uniform = {name: 0.08 for name in grids}
    names = ["papaya", "?<", "priorit", "Riemann", "exponen", "ects", "iloc", "Accommo"] * 2
    w = np.tril(rng.uniform(size=(16, 16)))
    w /= w.sum(-1, keepdims=True)
    labels = ["none", "the 4 induction heads", *(f"4 random heads ({i})" for i in range(1, 5))]
    return {
        "scores": lambda: plots.decoder_scores_figure(grids, uniform),
        "distance": lambda: plots.distance_figure(np.geomspace(0.09, 0.008, 39),
                                                  np.geomspace(0.08, 0.025, 39),
                                                  np.cos(np.arange(4097) / 300.0)),
        "removal": lambda: plots.removal_figure(labels, rng.uniform(3, 9, 6), rng.uniform(0, 1, 6)),
        "maps": lambda: plots.decoder_maps_figure([("induction: L18 H6", names, w),
                                                   ("previous token: L16 H0", names, w),
                                                   ("sink: L24 H0", names, w)]),
    }


@pytest.mark.parametrize("name", sorted(figures()))
def test_decoder_figure_texts_are_readable(name):
    assert problems(figures()[name]()) == []
