"""Chapter 10's lab: SmolLM2-135M-Instruct writes after the reader's prompt, and each head's
attention shows what it looked at to write each token.

:func:`decoder_state` is the pure state function. The reader's prompt (plain text, or one
user turn in the model's chat template) is generated from greedily or by sampling (a
temperature, top-k, top-p and a seed), with heads switched off or not; the step t picks
the token being written: the query is the token before it, and its row of weights over
every earlier token is what each head looked at. One head's map, or all 270 heads' rows
(the model view); the next token's top-k probabilities; the logit lens (each layer's
guess, read through the final norm and the tied output layer); and which query heads share
the chosen head's key/value head.

A generation (prompt, decoding, heads off) is computed once and kept (``functools``
caches): moving t, the layer, the head or the view only reads it.

The browser's twin is ``web/src/labs/decoder.js``: before the reader loads the model it
shows the states of :data:`DECODER_PRESETS` as the package computed them
(``web_export.decoder`` writes them with :func:`preset_run`), then it runs the GGUF file in
a Worker (``web/src/llama/``) and builds the same state from the engine's steps.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._validate import whole_number
from ..bpe import bytes_to_unicode
from ..decoding import largest, sampling_distribution, softmax_temperature
from ..multihead import kv_groups
from .core import Note, Scene, choice, seed_slider, slider, text, when

__all__ = ["DECODER_PROMPTS", "DECODER_PRESETS", "MAX_LAB_TOKENS", "MAX_NEW", "OFF",
           "DECODER_VIEWS", "TOP_K", "DecoderState", "decoder_state", "decoder_generation",
           "induction_heads", "preset_run"]

#: The lab's suggested prompts: the notes' running sentence, a repeat to continue, a question.
DECODER_PROMPTS = ("The weather is lovely today", "The cat sat on the mat. The cat sat on the",
                   "What is the capital of France?")
#: The most prompt tokens the lab reads (the chapter's functions take 512, the model 8192).
MAX_LAB_TOKENS = 128
#: The most tokens the lab writes.
MAX_NEW = 24
#: Heads to switch off: value -> label.
OFF = {"none": "none", "head": "the chosen head", "group": "its key/value group (3 heads)",
       "layer": "the chosen layer (9 heads)", "induction": "the 4 induction heads"}
#: The views: value -> label.
DECODER_VIEWS = {"head": "one head", "model": "all 270 heads", "lens": "logit lens"}
#: How many next tokens the readout lists.
TOP_K = 5


def _model():
    from ..smollm import SmolLM  # the reference layer: loaded on first use

    return SmolLM.load()


@functools.lru_cache(maxsize=2)
def induction_heads(model=None) -> tuple:
    """The heads whose induction score on repeated random tokens is above 0.6 (chapter 10's
    survey: four heads of layers 17 and 18), as (layer, head)."""
    from ..smollm_heads import head_survey

    survey = head_survey(model or _model())
    return tuple(h for h in survey.top("induction", 10) if survey.induction[h] > 0.6)


def _off_heads(off: str, layer: int, head: int, h: int, g: int) -> tuple:
    if off == "head":
        return ((layer, head),)
    if off == "group":
        groups = kv_groups(h, g)
        return tuple((layer, int(i)) for i in np.flatnonzero(groups == groups[head]))
    if off == "layer":
        return tuple((layer, i) for i in range(h))
    if off == "induction":
        return induction_heads()
    return ()


@functools.lru_cache(maxsize=32)
def decoder_generation(prompt_ids: tuple, n_new: int, temperature: float, top_k, top_p,
                       seed: int, off: tuple, model=None):
    """(generated tokens, the logits each was chosen from (n, V), the forward pass of the
    whole sequence with weights and the stream), computed once per generation (of the
    lab's model unless ``model`` is given)."""
    model = model or _model()
    g = model.generate(np.array(prompt_ids), n_new, temperature=temperature, top_k=top_k,
                       top_p=top_p, seed=seed if temperature else None, heads_off=off or None)
    sequence = g.sequence[:-1] if g.tokens.size else g.sequence  # the last token is never read
    out = model.model.forward(sequence, heads_off=off or None, hidden=True)
    return g.tokens, g.logits, out


@dataclass(frozen=True, eq=False)
class DecoderState:
    """What the decoder lab shows at step t (L = 30 layers, h = 9 heads)."""

    prompt: str            # as typed
    chat: bool             # wrapped in the chat template
    tokens: tuple          # (query + 2,) the token pieces up to the one written at step t
    ids: tuple             # their ids
    n_prompt: int          # s_0, the prompt's tokens
    generated: str         # the generated text
    n_written: int         # its tokens: n_new, or fewer where the model ended its text
    t: int                 # the step shown, 1..n (0: nothing generated)
    query: int             # the query position: the token before the one written at step t
    layer: int
    head: int
    n_layers: int          # L, the model's blocks
    h: int                 # its query heads a layer
    g: int                 # its key/value heads a layer
    view: str              # "head", "model" or "lens"
    decoding: str          # "greedy" or "sampled": how each token was chosen
    weights: np.ndarray    # (query + 1, query + 1) the head's map up to the query (view "head")
    row: np.ndarray        # (query + 1,) the head's weights at the query
    rows: np.ndarray       # (L, h, query + 1) float32: every head's row (view "model"; else empty)
    group: tuple           # the query heads sharing this head's key/value head
    group_rows: np.ndarray  # (len(group), query + 1) their rows at the query
    kv_head: int           # that key/value head
    off: tuple             # ((layer, head), ...) the heads switched off
    next_ids: tuple        # (TOP_K,) the most probable next tokens at the query
    next_tokens: tuple     # their pieces
    next_p: tuple          # their probabilities, under the decoding's distribution
    chosen: int            # the token written at step t (-1 when none)
    lens_tokens: tuple     # (L + 1,) each layer's top guess at the query (view "lens")
    lens_p: tuple          # (L + 1,) its probability
    notes: tuple           # of Note

    @property
    def T(self) -> int:
        return len(self.tokens)


#: Byte-level BPE's printable spelling of each byte, read back (bpe.bytes_to_unicode).
_BYTE_OF = {c: b for b, c in bytes_to_unicode().items()}
_SHOWN = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _readable(piece: str) -> str:
    """A token's spelling as a reader reads it: its bytes (which byte-level BPE spells as
    printable characters, "Ġ" a space, "Ċ" a newline, "âĢĵ" an en dash) as UTF-8 text; a
    newline, tab or carriage return as \\n, \\t, \\r; another control character, or a byte
    that is no whole character (a token holding half of an emoji), as \\xNN. A piece
    outside the byte alphabet is shown as it is. The page's twin: labs/decoder/gallery.js."""
    if any(c not in _BYTE_OF for c in piece):
        return piece
    text = bytes(_BYTE_OF[c] for c in piece).decode("utf-8", errors="backslashreplace")
    return "".join(_SHOWN.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 32 or ord(c) == 127 else c)
                   for c in text)


def _prompt_ids(model, prompt, chat: bool):
    """(ids, notes): the prompt's tokens, or () and an error note."""
    if not isinstance(prompt, str) or not prompt.strip():
        return (), [Note("error", "Type a prompt for the model to continue.")]
    text = model.chat(prompt) if chat else prompt
    try:
        return tuple(int(i) for i in model.encode(text, max_tokens=MAX_LAB_TOKENS)), []
    except ValueError as err:  # the limit, stated
        message = str(err)
        return (), [Note("error", message[:1].upper() + message[1:] + " (the lab reads at "
                                  "most that many; the chapter's functions take 512).")]


def _sampling(decoding, temperature, top_k, top_p, seed) -> tuple:
    """(temperature, top_k, top_p, seed) as the generation reads them: greedy is
    (0.0, None, None, 0); top_k 0 and top_p 1 keep every token."""
    if decoding != "sampled":
        return 0.0, None, None, 0
    return float(temperature), int(top_k) or None, float(top_p) if top_p < 1 else None, seed


def _next_top(row_logits, temperature, top_k, top_p) -> tuple:
    """The TOP_K most probable next tokens (ids, probabilities) under the distribution the
    token is drawn from: the logits' softmax when greedy (temperature 0)."""
    probs = (sampling_distribution(row_logits, temperature, top_k, top_p) if temperature
             else softmax_temperature(row_logits))  # (V,)
    top = largest(probs, TOP_K)  # (TOP_K,)
    return tuple(int(i) for i in top), tuple(float(probs[i]) for i in top)


def _lens(model, hidden) -> tuple:
    """(tokens, probabilities): each layer's top guess from one position's stream
    (L + 1, d), read through the final norm and the tied output layer."""
    best, best_p = model.model.logit_lens(hidden, k=1)  # (L+1, 1)
    return (tuple(_readable(model.tokenizer.tokens[int(i)]) for i in best[:, 0]),
            tuple(float(v) for v in best_p[:, 0]))


def _checked(model, layer, head, n_new, t, seed, decoding, view, off) -> tuple:
    c = model.config
    whole_number(seed, "seed", 0)
    layer = whole_number(layer, "layer", 0, c.n_layers - 1)
    head = whole_number(head, "head", 0, c.h - 1)
    n_new = whole_number(n_new, "n_new", 1, MAX_NEW)
    t = whole_number(t, "t", 1, MAX_NEW)
    for name, value, allowed in (("decoding", decoding, ("greedy", "sampled")),
                                 ("view", view, DECODER_VIEWS), ("off", off, OFF)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return layer, head, n_new, t


def decoder_state(prompt: str = DECODER_PROMPTS[0], chat: bool = False,
                  decoding: str = "greedy", temperature: float = 1.0, top_k: int = 0,
                  top_p: float = 1.0, seed: int = 0, n_new: int = 12, t: int = 1,
                  layer: int = 17, head: int = 4, view: str = "head", off: str = "none"
                  ) -> DecoderState:
    """SmolLM2 continuing ``prompt``, shown at step t.

    Pure (every generation is computed once and cached). Bad text never raises: an empty
    prompt, or one past :data:`MAX_LAB_TOKENS`, gives nothing generated and an error note.

    Parameters
    ----------
    prompt : str
    chat : bool
        Wrap the prompt as a user turn of the chat template (the model then answers).
    decoding : {"greedy", "sampled"}
    temperature, top_k, top_p, seed :
        The sampling's settings (read only when sampled); top_k 0 and top_p 1 keep every token.
    n_new : int
        Tokens to write, 1..24 (fewer when the model ends its turn).
    t : int
        The step shown, 1..n_new (past the last written token: the last, with a note).
    layer, head : int
        0..29 and 0..8.
    view : {"head", "model", "lens"}
    off : str
        A key of :data:`OFF`: heads switched off while generating.
    """
    model = _model()
    c = model.config
    layer, head, n_new, t = _checked(model, layer, head, n_new, t, seed, decoding, view, off)
    temperature, k, p, seed = _sampling(decoding, temperature, top_k, top_p, seed)
    off_heads = _off_heads(off, layer, head, c.h, c.g)
    prompt_ids, notes = _prompt_ids(model, prompt, bool(chat))
    s0 = len(prompt_ids)
    groups = kv_groups(c.h, c.g)
    group = tuple(int(i) for i in np.flatnonzero(groups == groups[head]))
    shared = dict(chat=bool(chat), layer=layer, head=head, n_layers=c.n_layers, h=c.h, g=c.g,
                  view=view, decoding=decoding, kv_head=int(groups[head]), group=group, off=off_heads)
    empty = np.zeros(0)
    if not prompt_ids:
        return DecoderState(
            prompt=prompt if isinstance(prompt, str) else "", tokens=(), ids=(), n_prompt=0,
            generated="", n_written=0, t=0, query=0, weights=np.zeros((0, 0)), row=empty, rows=empty,
            group_rows=np.zeros((0, 0)), next_ids=(), next_tokens=(), next_p=(), chosen=-1,
            lens_tokens=(), lens_p=(), notes=tuple(notes), **shared)
    tokens, logits, out = decoder_generation(prompt_ids, n_new, temperature, k, p, seed,
                                             off_heads)
    n = tokens.size
    if n < n_new:
        notes.append(Note("info", f"the model ended its text after {n} tokens"))
    if t > n:
        notes.append(Note("info", f"step {t} is past the last written token: showing step {n}"))
        t = n
    query = s0 + t - 2  # token t stands at s0 + t - 1; the one before it chose it
    ids = prompt_ids + tuple(int(i) for i in tokens)
    pieces = tuple(_readable(x) for x in model.tokenizer.pieces(ids))
    maps = out.weights[layer][head]  # (T', T'), T' = s0 + n - 1
    next_ids, next_p = _next_top(logits[t - 1], temperature, k, p)
    lens_tokens, lens_p = _lens(model, out.hidden[:, query]) if view == "lens" else ((), ())
    rows = empty
    if view == "model":
        # L x (h, T', T') -> (L, h, query + 1): every head's row at the query, float32
        rows = np.stack([w[:, query, :query + 1] for w in out.weights]).astype(np.float32)
    return DecoderState(
        prompt=prompt, tokens=pieces[:query + 2], ids=ids[:query + 2], n_prompt=s0,
        generated=model.decode(tokens), n_written=n, t=t, query=query,
        weights=maps[:query + 1, :query + 1].astype(np.float64) if view == "head"
        else np.zeros((0, 0)),
        row=maps[query, :query + 1].astype(np.float64), rows=rows,
        group_rows=out.weights[layer][list(group), query, :query + 1].astype(np.float64),
        next_ids=next_ids, next_tokens=tuple(_readable(model.tokenizer.tokens[i])
                                             for i in next_ids),
        next_p=next_p, chosen=int(tokens[t - 1]), lens_tokens=lens_tokens, lens_p=lens_p,
        notes=tuple(notes), **shared)


#: The generations the browser's lab shows before the reader loads the model: the
#: chapter's suggested prompts, greedy, as plain text and (the question) as a chat turn;
#: the repeat with its induction heads switched off; the running sentence sampled. Each is
#: (prompt, chat, decoding, temperature, top_k, top_p, seed, off).
DECODER_PRESETS = (
    (DECODER_PROMPTS[0], False, "greedy", 1.0, 0, 1.0, 0, "none"),
    (DECODER_PROMPTS[1], False, "greedy", 1.0, 0, 1.0, 0, "none"),
    (DECODER_PROMPTS[1], False, "greedy", 1.0, 0, 1.0, 0, "induction"),
    (DECODER_PROMPTS[2], True, "greedy", 1.0, 0, 1.0, 0, "none"),
    (DECODER_PROMPTS[2], False, "greedy", 1.0, 0, 1.0, 0, "none"),
    (DECODER_PROMPTS[0], False, "sampled", 1.5, 0, 1.0, 3, "none"),
)


def preset_run(model, prompt: str, chat: bool, decoding: str, temperature: float,
               top_k: int, top_p: float, seed: int, off: str, n_new: int = MAX_NEW) -> dict:
    """One generation of ``n_new`` tokens as the browser's lab reads it (the gallery file,
    ``web_export.decoder``): every state of the lab at any step t <= n_new, layer, head and
    view follows from it, as :func:`decoder_state` computes them.

    Returns
    -------
    dict
        ``ids`` (s0 + n,) the prompt's and the written tokens; ``pieces``, their spellings;
        ``n_prompt``; ``generated``, the text after each step; ``weights`` (L, h, T', T')
        float32, the whole sequence's maps (T' = s0 + n - 1); ``next_ids``, ``next_p``
        (n, TOP_K) the top of each step's distribution, ``next_tokens`` their spellings;
        ``lens_tokens``, ``lens_p``
        (n, L + 1) the logit lens at each step's query; ``off``, the heads switched off.
    """
    c = model.config
    temperature, k, p, seed = _sampling(decoding, temperature, top_k, top_p, seed)
    off_heads = induction_heads(model) if off == "induction" else _off_heads(off, 0, 0, c.h,
                                                                             c.g)
    prompt_ids, notes = _prompt_ids(model, prompt, chat)
    if notes:
        raise ValueError(f"preset {prompt!r}: {notes[0].text}")
    tokens, logits, out = decoder_generation(prompt_ids, n_new, temperature, k, p, seed,
                                             off_heads, model=model)
    s0, n = len(prompt_ids), tokens.size
    ids = prompt_ids + tuple(int(i) for i in tokens)
    tops = [_next_top(logits[i], temperature, k, p) for i in range(n)]
    lens = [_lens(model, out.hidden[:, s0 + i - 1]) for i in range(n)]
    next_tokens = tuple(tuple(_readable(model.tokenizer.tokens[i]) for i in a) for a, _ in tops)
    return {"ids": ids, "pieces": tuple(_readable(x) for x in model.tokenizer.pieces(ids)),
            "n_prompt": s0, "generated": tuple(model.decode(tokens[:i + 1]) for i in range(n)),
            "weights": np.stack(out.weights).astype(np.float32), "off": off_heads,
            "next_ids": np.array([a for a, _ in tops]), "next_p": np.array([b for _, b in tops]),
            "next_tokens": next_tokens,
            "lens_tokens": tuple(a for a, _ in lens), "lens_p": np.array([b for _, b in lens])}


def _t_options(values) -> tuple:
    """The steps a reader can show: 1..n_new (a slider past them drew the last step again)."""
    return tuple((str(t), t) for t in range(1, values["n_new"] + 1))


SCENE = Scene(
    name="decoder",
    title="A modern decoder writes: SmolLM2's 270 heads, token by token",
    controls=(
        text("prompt", "prompt", DECODER_PROMPTS[0], suggestions=DECODER_PROMPTS,
             placeholder="type a prompt"),
        choice("chat", "as", [("plain text", False), ("a chat turn", True)], False),
        choice("decoding", "decoding", [("greedy", "greedy"), ("sampled", "sampled")], "greedy"),
        choice("temperature", "temperature", [0.5, 0.7, 1.0, 1.5], 1.0,
               active_when=when("decoding", "sampled"), hint="used when sampling"),
        choice("top_k", "top-k", [("all", 0), ("5", 5), ("20", 20), ("50", 50)], 0,
               active_when=when("decoding", "sampled"), hint="used when sampling"),
        choice("top_p", "top-p", [("1 (all)", 1.0), ("0.95", 0.95), ("0.9", 0.9), ("0.5", 0.5)],
               1.0, active_when=when("decoding", "sampled"), hint="used when sampling"),
        seed_slider("seed (sampling)", active_when=when("decoding", "sampled"),
                    hint="used when sampling"),
        slider("n_new", "tokens to write", range(1, MAX_NEW + 1), 12),
        slider("t", "step t shown", range(1, MAX_NEW + 1), 1, options_for=_t_options),
        slider("layer", "layer", range(30), 17),
        slider("head", "head", range(9), 4),
        choice("view", "view", [(label, v) for v, label in DECODER_VIEWS.items()], "head"),
        choice("off", "heads switched off", [(label, v) for v, label in OFF.items()], "none"),
    ),
    state=decoder_state, web="decoder",
    suggested=({"prompt": DECODER_PROMPTS[1], "layer": 17, "head": 4},
               {"prompt": DECODER_PROMPTS[1], "off": "induction"},
               {"prompt": DECODER_PROMPTS[2], "chat": True, "n_new": 12},
               {"view": "model"}, {"view": "lens", "prompt": DECODER_PROMPTS[1]},
               {"decoding": "sampled", "temperature": 1.5, "seed": 3}),
)
SCENES = (SCENE,)
