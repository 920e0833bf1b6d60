"""Chapter 2's RoPE picture: readable, and drawing the pair it is given."""

import numpy as np

from attention_book.plots import rope_pair_figure
from attention_book.positional import rotary_embedding
from test_figure_text import problems


def figure():
    q, k = np.array([1.0, 0.3]), np.array([0.6, 0.9])
    placements = [(m, n, rotary_embedding(q[None], positions=[m])[0],
                   rotary_embedding(k[None], positions=[n])[0]) for m, n in ((0, 1), (3, 4), (0, 3))]
    return rope_pair_figure(q, k, placements)


def test_rope_figure_texts_are_readable():
    assert problems(figure()) == []


def test_titles_give_positions_and_the_turned_pairs_dot_product():
    titles = [ax.get_title() for ax in figure().axes]
    assert titles == ["m = 0, n = 1:  q\u00b7k = -0.14", "m = 3, n = 4:  q\u00b7k = -0.14",
                      "m = 0, n = 3:  q\u00b7k = -0.96"]
