"""The whole model as one diagram, drawn from its configuration: embeddings and positions,
L blocks (each sub-layer with its LayerNorm and residual sum), the final LayerNorm and the
unembedding, every box labelled with the shape of the array it outputs."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ..block import EncoderBlock
from .core import notebook_figure

__all__ = ["model_diagram", "model_diagram_rows", "model_diagram_alt"]

# pale tints (text stays black: contrast above 10:1), one per kind of box
_FILL = {"data": "#eeeeee", "embed": "#dce6f2", "norm": "#f6edc8", "attention": "#d5ecdf",
         "ffn": "#e3ddef", "sum": "#ffffff", "out": "#dce6f2"}
_BOX_H, _GAP, _WIDTH = 0.36, 0.2, 5.4  # inches: box height, gap between boxes, box width
_LEFT = 1.35  # inches: room on the left for the residual arrows and the block bracket


def _check(blocks, V: int, s: int, positional: str) -> list:
    blocks = list(blocks)
    if not blocks or not all(isinstance(b, EncoderBlock) for b in blocks):
        raise ValueError("blocks must be a non-empty sequence of EncoderBlocks")
    first = blocks[0]
    if any((b.d, b.h, b.d_ff, b.norm_first) != (first.d, first.h, first.d_ff, first.norm_first)
           for b in blocks):
        raise ValueError("every block must have the same d, h, d_ff and LayerNorm placement")
    for name, value in (("V", V), ("s", s)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    if positional not in ("learned", "sinusoidal"):
        raise ValueError(f"positional must be 'learned' or 'sinusoidal', got {positional!r}")
    return blocks


def model_diagram_rows(blocks: Sequence[EncoderBlock], *, V: int, s: int,
                       positional: str = "learned", causal: bool = False) -> list:
    """The diagram's boxes, top to bottom, as (kind, text, shape) rows: what
    :func:`model_diagram` draws and :func:`model_diagram_alt` describes.

    Parameters
    ----------
    blocks : sequence of EncoderBlock, length L
        The model's blocks (all with the same d, h, d_ff and norm_first); they give d, h,
        d_k, d_ff and the LayerNorm placement.
    V : int
        Vocabulary (alphabet) size: the rows of E and the columns of the logits.
    s : int
        Sequence length shown.
    positional : {"learned", "sinusoidal"}
        A learned table P:(s_max, d), or chapter 2's sinusoidal encoding.
    causal : bool
        Whether the attention has a causal mask.

    Returns
    -------
    list of (str, str, str)
        kind ("data", "embed", "norm", "attention", "ffn", "sum", "out"), the box's
        text, and the shape of what it outputs in the book's notation with the values.
    """
    blocks = _check(blocks, V, s, positional)
    b = blocks[0]
    d, h, d_ff = b.d, b.h, b.d_ff
    sd = f"(s, d) = ({s}, {d})"
    pos = ("+ learned positions P[0:s], P: (s_max, d)" if positional == "learned"
           else "+ sinusoidal positions PE (chapter 2)")
    attn = (f"multi-head {'causal ' if causal else ''}self-attention: h = {h}, d_k = {d // h}"
            f", weights (h, s, s) = ({h}, {s}, {s})")
    ffn = f"feed-forward network ({b.activation}): (s, d_ff) = ({s}, {d_ff}), back to d"
    rows = [("data", "token ids t", f"(s,) = ({s},)"),
            ("embed", f"token embedding E[t], E: (V, d) = ({V}, {d})", sd),
            ("embed", pos, sd)]
    for sub, text, kind in ((1, attn, "attention"), (2, ffn, "ffn")):
        norm = ("norm", f"LayerNorm {sub}", sd)
        work = (kind, text, sd)
        add = ("sum", "+ residual: add to the stream", sd)
        rows += [norm, work, add] if b.norm_first else [work, add, norm]
    if b.norm_first:
        rows.append(("norm", "final LayerNorm", sd))
    rows.append(("out", f"unembedding W_u: (d, V) = ({d}, {V}) -> logits", f"(s, V) = ({s}, {V})"))
    return rows


def model_diagram_alt(blocks: Sequence[EncoderBlock], *, V: int, s: int,
                      positional: str = "learned", causal: bool = False) -> str:
    """Alt text for :func:`model_diagram` (same parameters): every box and its shape."""
    rows = model_diagram_rows(blocks, V=V, s=s, positional=positional, causal=causal)
    L = len(list(blocks))
    steps = [f"{text}, {shape}" for _, text, shape in rows]
    inside = steps[3:9]
    return (f"A diagram of the whole model, read top to bottom, each box labelled with the "
            f"shape of its output. {steps[0]}; {steps[1]}; {steps[2]}. Then a bracket marks "
            f"the {L} identical blocks (L = {L}), each: " + "; ".join(inside) + ". Arrows on "
            "the left carry the stream around each sub-layer to its residual sum. Then "
            + "; ".join(steps[9:]) + ".")


def model_diagram(blocks: Sequence[EncoderBlock], *, V: int, s: int,
                  positional: str = "learned", causal: bool = False) -> Figure:
    """The whole model as one diagram: the boxes of :func:`model_diagram_rows` (same
    parameters) top to bottom, joined by arrows, the L blocks bracketed ("x L"), residual
    arrows around each sub-layer, and the shape of each box's output on its right. Its
    ``alt`` is :func:`model_diagram_alt`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    blocks = _check(blocks, V, s, positional)
    rows = model_diagram_rows(blocks, V=V, s=s, positional=positional, causal=causal)
    n = len(rows)
    width, height = 9.2, n * (_BOX_H + _GAP) + 0.3
    fig = notebook_figure(width, height)
    fig.set_layout_engine(None)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set(xlim=(0, width), ylim=(0, height))
    ax.axis("off")
    centre = [height - 0.25 - _BOX_H / 2 - k * (_BOX_H + _GAP) for k in range(n)]  # y of each box
    x0, x1 = _LEFT, _LEFT + _WIDTH
    for k, ((kind, text, shape), y) in enumerate(zip(rows, centre)):
        ax.add_patch(FancyBboxPatch((x0, y - _BOX_H / 2), _WIDTH, _BOX_H,
                                    boxstyle="round,pad=0,rounding_size=0.08",
                                    facecolor=_FILL[kind], edgecolor="0.25", linewidth=0.9))
        ax.text((x0 + x1) / 2, y, text, ha="center", va="center", fontsize=9.5)
        ax.text(x1 + 0.12, y, shape, ha="left", va="center", fontsize=9.5, color="0.15")
        if k:
            ax.add_patch(FancyArrowPatch(((x0 + x1) / 2, centre[k - 1] - _BOX_H / 2),
                                         ((x0 + x1) / 2, y + _BOX_H / 2),
                                         arrowstyle="-|>", mutation_scale=9, color="0.25",
                                         linewidth=0.9))
    # the residual arrows: from the stream before each sub-layer to its sum
    sums = [k for k, row in enumerate(rows) if row[0] == "sum"]
    for k in sums:
        start = k - 2 if blocks[0].norm_first else k - 1  # the sub-layer's input arrow
        y_from = (centre[start - 1] + centre[start]) / 2  # on the arrow into it
        xr = x0 - 0.28
        ax.plot([(x0 + x1) / 2], [y_from], "o", color="0.35", markersize=3.5)  # the branch
        ax.add_patch(FancyArrowPatch(((x0 + x1) / 2, y_from), (xr, y_from), arrowstyle="-",
                                     color="0.35", linewidth=0.9, shrinkA=0, shrinkB=0))
        ax.add_patch(FancyArrowPatch((xr, y_from), (xr, centre[k]), arrowstyle="-",
                                     color="0.35", linewidth=0.9, shrinkA=0, shrinkB=0))
        ax.add_patch(FancyArrowPatch((xr, centre[k]), (x0, centre[k]), arrowstyle="-|>",
                                     mutation_scale=9, color="0.35", linewidth=0.9,
                                     shrinkA=0, shrinkB=0))
    # the bracket around the L blocks
    top, bottom = centre[3] + _BOX_H / 2 + 0.06, centre[8] - _BOX_H / 2 - 0.06
    xb = x0 - 0.62
    ax.plot([xb + 0.12, xb, xb, xb + 0.12], [top, top, bottom, bottom], color="0.2",
            linewidth=1.2)
    L = len(blocks)
    ax.text(xb - 0.08, (top + bottom) / 2, f"block,\n\u00d7 L = {L}", ha="right",
            va="center", fontsize=9.5)
    fig.alt = model_diagram_alt(blocks, V=V, s=s, positional=positional, causal=causal)
    return fig
