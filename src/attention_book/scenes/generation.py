"""Chapter 8's generation lab: the induction model writes, one token at a time, and each
head's attention row shows what it looked at to choose each token.

:func:`generation_state` is the pure state function: the reader's prompt (symbols 0..31), a
checkpoint of the induction run (0 = untrained, 25 = trained), how many tokens to generate,
greedy decoding or sampling at a temperature with a seed, and the step t the figure shows.
The tokens come from ``attention_book.decoding.generate`` around the book's key/value
cached decoder (``NumpyModel.decoder``): the prompt is fed once, then each chosen token, and
each call's attention (``CachedDecoder.weights``) is the row of the query that produced
the next token, over every key before it. A generation is cached per (prompt, checkpoint,
n, temperature, seed): scrubbing t never decodes again.

The lab runs the checkpoints the reader's browser runs (``checkpoints.page_checkpoints``:
5-bit changes from one checkpoint to the next, decoded), in the notebook as in the book, so
both show the same tokens and numbers; :func:`continuation_counts` measures the model as
trained (float32) or as the page runs it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._validate import whole_number
from ..heads import induction_targets
from .core import HasTokens, Note, Scene, choice, compare, seed_slider, slider, text
from .training import TRAINING_CHECKPOINTS, read_symbols, training_run

__all__ = ["GENERATION_PROMPTS", "generation_run", "room", "GENERATION_TEMPERATURES", "MAX_GENERATED",
           "continuation_counts", "continuations", "GenerationState", "generation_state"]

#: The model's positions (the induction task's length): prompt and generated tokens share them.
_LENGTH = 24
#: Its symbols, 0..31 (training.TASKS["induction"], which imports torch: a scene never does;
#: tests/test_training_lab.py checks the two agree).
_VOCAB = 32
#: The most tokens the lab generates (after a prompt of one symbol).
MAX_GENERATED = _LENGTH - 1
#: Decoding: 0 = greedy (the argmax), else sampling from softmax(logits / T).
GENERATION_TEMPERATURES = (0.0, 0.5, 1.0, 2.0)
#: The lab's suggested prompts: one period of 7 and two symbols more (the pattern seen once),
#: period 4 (shorter than any period of training, 6..12) twice, and 9 distinct symbols
#: (nothing repeats: nothing to copy, until the model repeats itself).
GENERATION_PROMPTS = ("31 29 28 3 10 4 12 31 29", "5 17 23 8 5 17 23 8",
                      "28 29 3 17 30 25 12 27 10")


def _targets(tokens, q: int) -> tuple:
    """The keys an induction head should weigh most at query ``q``: each j < q whose previous
    token is the query's symbol (``heads.induction_targets``), ascending; () if none."""
    return tuple(int(j) for j in np.flatnonzero(induction_targets(tokens[:q + 1])[q]))


#: The weights a generation runs on: as trained, or as the page decodes them.
WEIGHTS = ("float32", "page")


@functools.lru_cache(maxsize=2)
def generation_run(weights: str = "page"):
    """The induction run with its checkpoints "float32" (as trained: ``train_tiny``) or
    "page" (as ``training-checkpoints.js`` carries them to the reader's browser)."""
    import dataclasses

    from ..checkpoints import page_checkpoints  # the reference layer

    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {list(WEIGHTS)}, got {weights!r}")
    run = training_run("induction")
    if weights == "float32":
        return run
    return dataclasses.replace(run, checkpoints=page_checkpoints(run), _nets={})


@functools.lru_cache(maxsize=256)
def _generate(prompt: tuple, step: int, n: int, temperature: float, seed: int,
              weights: str = "page") -> tuple:
    """(generated (n,), rows: n arrays (L h, s_0 + k - 1), probability (n,)) of one run."""
    from ..decoding import generate, softmax_temperature  # numpy only

    decoder = generation_run(weights).numpy_model(step).decoder()
    rows = []

    def feed(new_tokens):
        logits = decoder(new_tokens)  # (t_new, V)
        # the last new query's row in each layer: L x (h, length) -> (L h, length)
        rows.append(np.concatenate([w[:, -1] for w in decoder.weights]))
        return logits

    tokens, logits = generate(feed, np.array(prompt, dtype=np.int64), n,
                              temperature=temperature, seed=seed if temperature else None)
    p = softmax_temperature(logits, temperature or 1.0)  # (n, V)
    return (tuple(int(x) for x in tokens), tuple(rows),
            tuple(float(v) for v in p[np.arange(n), tokens]))


def continuation_counts(prompts, checkpoint: int = TRAINING_CHECKPOINTS - 1,
                        weights: str = "float32") -> dict:
    """How the induction model continues repeated patterns, greedily, at a checkpoint.

    Parameters
    ----------
    prompts : sequence of (prompt, n)
        Each prompt a tuple of symbols whose pattern has been seen at least once, and the
        number of tokens to generate after it (prompt + n <= 24).
    checkpoint : int
    weights : {"float32", "page"}
        The model as trained, or as the lab runs it (:func:`generation_run`).

    Returns
    -------
    dict
        ``"prompts"``: how many prompts; ``"whole"``: how many are continued right at every
        step (each token the one a copy of the pattern gives); ``"steps"``: generated steps
        whose query's symbol occurred before; ``"right"``: how many of those chose the
        copy's token; ``"top"``: (n_heads,) how many of those steps each head weighed a key
        after an earlier copy (``heads.induction_targets``) most; ``"chance"``: how many of
        those steps a head would hit picking one of the keys it may see at random (the sum
        over steps of the targets' share of the keys).

    Notes
    -----
    The counts are kept on disk (``_build/cache/generation``, :mod:`attention_book.diskcache`),
    so that the next execution of chapter 8 reads them: keyed by the arguments, the source of
    every module the run's training and the decoding go through, and the versions of torch
    and numpy, as ``train_tiny``'s runs are.
    """
    from .. import decoding, diskcache, training  # noqa: F401 (decoding: in the digest)

    prompts = [(tuple(int(x) for x in prompt), int(n)) for prompt, n in prompts]
    run = generation_run(weights)
    arrays = diskcache.cached_arrays(
        "generation", {"prompts": prompts, "checkpoint": int(checkpoint), "weights": weights},
        _code_digest(_COUNT_CODE, weights),
        lambda: {k: np.asarray(v) for k, v in _counts(prompts, run.steps[checkpoint],
                                                      weights).items() if v is not None},
        versions=training.torch_versions())
    out = {k: int(v) for k, v in arrays.items() if k not in ("top", "chance")}
    return {**out, "top": arrays.get("top"), "chance": float(arrays["chance"])}


def continuations(prompts, temperature: float = 0.0, seeds=None,
                  checkpoint: int = TRAINING_CHECKPOINTS - 1,
                  weights: str = "float32") -> list[np.ndarray]:
    """The induction model's continuation of each prompt: ``decoding.generate`` on the
    model's key/value cached decoder, greedy or sampled.

    Parameters
    ----------
    prompts : sequence of (prompt, n)
        Each prompt a sequence of symbols 0..31, and the number of tokens to generate
        after it (prompt + n <= 25: the last token is chosen, never fed).
    temperature : float
        0: greedy; else sampling from softmax(logits / T).
    seeds : sequence of int, optional
        One a prompt (the sampling's seed), when temperature > 0.
    checkpoint : int
    weights : {"float32", "page"}
        The model as trained, or as the lab runs it (:func:`generation_run`).

    Returns
    -------
    list of numpy.ndarray of int64, shape (n,) each
        ``generate(run.numpy_model(step).decoder(), prompt, n, temperature=temperature,
        seed=seed)[0]`` for each prompt.

    Notes
    -----
    Kept on disk (``_build/cache/continuation``) as :func:`continuation_counts` is, with the
    temperature and the seeds in the key.
    """
    from .. import decoding, diskcache, training  # noqa: F401 (in the digest)

    prompts = [(tuple(int(x) for x in prompt), int(n)) for prompt, n in prompts]
    temperature = float(temperature)
    seeds = [None] * len(prompts) if seeds is None else [int(seed) for seed in seeds]
    if len(seeds) != len(prompts):
        raise ValueError(f"give one seed a prompt: {len(seeds)} seeds for {len(prompts)} "
                         f"prompts")
    run = generation_run(weights)
    step = run.steps[whole_number(checkpoint, "checkpoint", 0, len(run.steps) - 1)]
    net = run.numpy_model(step)

    def compute() -> dict:
        out = [decoding.generate(net.decoder(), np.array(prompt, dtype=np.int64), n,
                                 temperature=temperature, seed=seed)[0]
               for (prompt, n), seed in zip(prompts, seeds)]
        return {"tokens": np.concatenate(out + [np.zeros(0, np.int64)]).astype(np.int64),
                "lengths": np.array([len(o) for o in out], dtype=np.int64)}

    arrays = diskcache.cached_arrays(
        "continuation", {"prompts": prompts, "temperature": temperature, "seeds": seeds,
                         "checkpoint": int(checkpoint), "weights": weights},
        _code_digest(_CONTINUATION_CODE, weights), compute, versions=training.torch_versions())
    ends = np.cumsum(arrays["lengths"])  # (prompts,)
    return [arrays["tokens"][end - n:end] for n, end in zip(arrays["lengths"], ends)]


#: The modules a generation runs through besides this one: the training (the weights), the
#: decoder and its blocks, the decoding loop and the induction targets.
_DECODING_MODULES = ("attention_book.training", "attention_book.attention",
                     "attention_book.block", "attention_book.multihead",
                     "attention_book.masking", "attention_book.decoding",
                     "attention_book.heads")
#: The modules whose source decides :func:`continuation_counts`: these, this one and the runs'.
_COUNT_CODE = (__name__, "attention_book.scenes.training", *_DECODING_MODULES)
#: ... and :func:`continuations` (tests/test_chapter8_cache.py checks the list): the same and
#: the checks' of the arguments.
_CONTINUATION_CODE = (*_COUNT_CODE, "attention_book._validate")


def _code_digest(code: tuple, weights: str) -> str | None:
    """:func:`attention_book.diskcache.module_digest` of the modules ``code`` names and, for
    the page's weights, of the module that gives them as the page carries them
    (:func:`attention_book.checkpoints.page_checkpoints`)."""
    from .. import diskcache

    page = ("attention_book.web_export.training",) if weights == "page" else ()
    return diskcache.module_digest(*code, *page)


def _counts(prompts, step: int, weights: str) -> dict:
    """continuation_counts' counts, computed."""
    out = {"prompts": 0, "whole": 0, "steps": 0, "right": 0, "top": None, "chance": 0.0}
    for prompt, n in prompts:
        generated, rows, _ = _generate(prompt, step, n, 0.0, 0, weights)
        sequence, ok = prompt + generated, True
        top = np.zeros(len(rows[0]), dtype=int) if out["top"] is None else out["top"]
        for k, row in enumerate(rows):  # row: (n_heads, q + 1), q = the query's position
            q = len(prompt) + k - 1
            keys = _targets(sequence, q)
            if not keys:
                ok = False
                continue
            out["steps"] += 1
            out["chance"] += len(keys) / (q + 1)
            right = generated[k] == sequence[keys[-1]]
            out["right"] += right
            ok &= right
            top += [int(np.argmax(w)) in keys for w in row]  # (n_heads,)
        out["top"] = top
        out["prompts"] += 1
        out["whole"] += ok
    return out


@dataclass(frozen=True, eq=False)
class GenerationState(HasTokens):
    """Everything the generation lab shows at step t; n_heads = L h."""

    checkpoint: int         # the checkpoint's index, 0..25
    step: int               # its optimiser step
    steps: int              # the run's last step
    temperature: float      # 0 = greedy
    seed: int               # the sampling's seed (read only when temperature > 0)
    prompt: tuple           # (s_0,) int: the reader's prompt (empty when it is invalid)
    generated: tuple        # (n,) int: every generated token, in order
    asked: int              # the n asked for (more than generated when the prompt leaves less room)
    t: int                  # the step shown, 1..n (0: nothing generated)
    t_asked: int            # the step asked for (past n: the last one is shown)
    tokens: tuple           # (s_0 + t,) the sequence so far, the new token last
    heads: tuple            # (n_heads,) "layer 0, head 0", ...
    # (n_heads, t, s_0 + t): row k - 1 is the attention of the query at position s_0 + k - 2,
    # which produced token k, over keys 0..s_0 + k - 2 (zero from the new token on)
    weights: np.ndarray
    top: tuple              # (n_heads,) the key each head weighs most at step t
    targets: tuple          # (n,) tuples: the keys after earlier copies at each step (_targets)
    expected: tuple         # (n,) the token a copy of the pattern gives (None: nothing to copy)
    probability: tuple      # (n,) the chosen token's probability where it was chosen from
    notes: tuple            # of Note


def generation_state(prompt: str = GENERATION_PROMPTS[0],
                     checkpoint: int = TRAINING_CHECKPOINTS - 1, n: int = 7, t: int = 7,
                     temperature: float = 0.0, seed: int = 0) -> GenerationState:
    """The induction model's generation after the reader's prompt, shown at step t.

    Pure (the run is deterministic and memoised). Bad text never raises: it gives nothing
    generated and an error note (the model's own message for a bad symbol).

    Parameters
    ----------
    prompt : str
        1..23 symbols 0..31 separated by spaces.
    checkpoint : int
        0..25, a saved checkpoint of the induction run (0 = untrained).
    n : int
        Tokens to generate, 1..23; fewer when the prompt leaves less room (24 positions).
    t : int
        The step shown, 1..23 (past the last generated token: the last one, with a note).
    temperature : {0.0, 0.5, 1.0, 2.0}
        0: greedy; else sampling from softmax(logits / T), seeded by ``seed``.
    seed : int
        0..20.
    """
    run = generation_run("page")
    last = len(run.steps) - 1
    checkpoint = whole_number(checkpoint, "checkpoint", 0, last)
    n = asked = whole_number(n, "n", 1, MAX_GENERATED)
    t = t_asked = whole_number(t, "t", 1, MAX_GENERATED)
    seed = whole_number(seed, "seed", 0, 20)
    if isinstance(temperature, bool) or temperature not in GENERATION_TEMPERATURES:
        raise ValueError(f"temperature must be one of {list(GENERATION_TEMPERATURES)}, "
                         f"got {temperature!r}")
    temperature = float(temperature)
    step = run.steps[checkpoint]
    heads = tuple(f"layer {i}, head {j}" for i in range(run.config["n_layers"])
                  for j in range(run.config["n_heads"]))
    prompt_tokens, notes = read_symbols(prompt)
    if prompt_tokens:
        try:
            run.check_tokens(np.array(prompt_tokens, dtype=np.int64))
        except (ValueError, OverflowError) as err:  # the model's message: range, length
            notes.append(Note("error", str(err) if isinstance(err, ValueError) else
                              f"symbols must be 0..{run.config['vocab'] - 1}"))
            prompt_tokens = ()
        else:
            if len(prompt_tokens) > MAX_GENERATED:
                notes.append(Note("error", f"a prompt has at most {MAX_GENERATED} symbols: the "
                                           f"model has {_LENGTH} positions and one at least is "
                                           f"for a generated token; got {len(prompt_tokens)}"))
                prompt_tokens = ()
    generated, rows, probability = (), (), ()
    s0 = len(prompt_tokens)
    if prompt_tokens:
        if s0 + n > _LENGTH:
            fit = _LENGTH - s0
            notes.append(Note("warning", f"{fit} token{'s' if fit != 1 else ''} "
                                         f"fit{'' if fit != 1 else 's'} after a prompt of {s0} "
                                         f"(the model has {_LENGTH} positions): generating "
                                         f"{_LENGTH - s0}, not {n}"))
            n = _LENGTH - s0
        # greedy ignores the seed: one cached generation for every seed
        generated, rows, probability = _generate(prompt_tokens, step, n, temperature,
                                                 seed if temperature else 0)
        if t > n:
            notes.append(Note("info", f"step {t} is past the last generated token: "
                                      f"showing step {n}"))
            t = n
    else:
        t = 0
    sequence = prompt_tokens + generated
    weights = np.zeros((len(heads), t, s0 + t))
    for k in range(t):  # row k: the query at position s0 + k - 1, keys 0..s0 + k - 1
        weights[:, k, :s0 + k] = rows[k]  # (n_heads, s0 + k) into (n_heads, s0 + t)
    targets = tuple(_targets(sequence, s0 + k - 1) for k in range(len(generated)))
    return GenerationState(
        checkpoint=checkpoint, step=step, steps=run.steps[-1], temperature=temperature,
        seed=seed, prompt=prompt_tokens, generated=generated, asked=asked, t=t,
        t_asked=t_asked, tokens=sequence[:s0 + t], heads=heads, weights=weights,
        top=tuple(int(np.argmax(w)) for w in rows[t - 1]) if t else (),
        targets=targets,
        expected=tuple(sequence[keys[-1]] if keys else None for keys in targets),
        probability=probability, notes=tuple(notes))


def room(prompt) -> int:
    """How many tokens fit after ``prompt`` (the model has 24 positions): what the sliders "n"
    and "t" offer, so that they never read more than is generated (they read 23 while the
    picture showed step 15). A prompt the model refuses leaves the most room: its error
    note says what is wrong, and nothing is generated."""
    tokens, _ = read_symbols(prompt)
    if not tokens or len(tokens) > MAX_GENERATED or not all(0 <= t < _VOCAB for t in tokens):
        return MAX_GENERATED
    return _LENGTH - len(tokens)


def _n_options(values) -> tuple:
    return tuple((str(n), n) for n in range(1, room(values["prompt"]) + 1))


def _t_options(values) -> tuple:
    return tuple((str(t), t) for t in range(1, min(values["n"], room(values["prompt"])) + 1))


SCENE = Scene(
    name="generation",
    title="Generation explorer: what each head looked at to write each token",
    controls=(
        text("prompt", "prompt (1..23 of 0..31)", GENERATION_PROMPTS[0],
             suggestions=GENERATION_PROMPTS, placeholder="up to 23 symbols 0..31"),
        slider("checkpoint", "checkpoint (0 = untrained)", range(TRAINING_CHECKPOINTS),
               TRAINING_CHECKPOINTS - 1),
        # 9 + 7 = 16 positions by default: the axes name every token (they thin beyond 16)
        # each as far as the prompt leaves room for (24 positions), t no further than n
        slider("n", "tokens to generate", range(1, MAX_GENERATED + 1), 7, options_for=_n_options),
        slider("t", "step t shown", range(1, MAX_GENERATED + 1), 7, options_for=_t_options),
        choice("temperature", "decoding", [("greedy", 0.0), ("T = 0.5", 0.5), ("T = 1", 1.0),
                                           ("T = 2", 2.0)], 0.0),
        seed_slider("seed (sampling)", active_when=compare("temperature", ">", 0),
                    hint="used when sampling"),
    ),
    state=generation_state, web="generation",
    warm=({"checkpoint": 0},),
    suggested=(
        {"checkpoint": 0},
        {"t": 1}, {"t": 3},
        {"prompt": GENERATION_PROMPTS[1]},
        {"prompt": GENERATION_PROMPTS[2]},
        {"temperature": 2.0, "seed": 3},
    ),
)
SCENES = (SCENE,)
