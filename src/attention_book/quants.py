"""GGUF's block quantisation, undone: raw bytes -> float32 weights (chapter 10).

A GGUF file (llama.cpp's format) stores most of a model's matrices in blocks of 32 numbers
that share one scale, so that each number takes 4 or 8 bits instead of 32. Each block is
read back independently::

    Q8_0  34 bytes: scale d (float16), 32 signed bytes q       x = d * q
    Q4_0  18 bytes: scale d (float16), 16 bytes of 4-bit q     x = d * (q - 8)
    Q4_1  20 bytes: scale d, minimum m (float16 each), 16 bytes of 4-bit q
                                                               x = d * q + m

In a 4-bit block, byte i holds number i in its low four bits and number i + 16 in its high
four bits. F32 and F16 tensors are stored whole, little-endian.

The arithmetic is llama.cpp's (and the ``gguf`` package's ``gguf.quants.dequantize``): the
float16 scales are widened to float32 and every product and sum is float32, so the result
is bit for bit the same (tests/test_quants.py). This module imports numpy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["QuantType", "QUANT_TYPES", "quant_type", "tensor_bytes", "dequantize",
           "bits_per_weight"]


@dataclass(frozen=True)
class QuantType:
    """One of GGML's tensor types: how many numbers a block holds and how many bytes.

    Attributes
    ----------
    name : str
        GGML's name, e.g. "Q4_1".
    type_id : int
        Its number in a GGUF file (``general.file_type`` and each tensor's type).
    block_size : int
        Numbers per block (1 for F32 and F16).
    type_size : int
        Bytes per block.
    """

    name: str
    type_id: int
    block_size: int
    type_size: int

    @property
    def bits_per_weight(self) -> float:
        """Bits a number takes, scales included (4.5 for Q4_0, 5 for Q4_1, 8.5 for Q8_0)."""
        return 8 * self.type_size / self.block_size


#: The types this book reads, by name (GGML's numbers: ``ggml.h``'s ``ggml_type``).
QUANT_TYPES = {t.name: t for t in (
    QuantType("F32", 0, 1, 4),
    QuantType("F16", 1, 1, 2),
    QuantType("Q4_0", 2, 32, 18),
    QuantType("Q4_1", 3, 32, 20),
    QuantType("Q8_0", 8, 32, 34),
)}


def quant_type(kind) -> QuantType:
    """The :class:`QuantType` named ``kind`` ("Q4_1") or numbered ``kind`` (3).

    Raises
    ------
    ValueError
        For any other type, naming the ones this module reads.
    """
    for t in QUANT_TYPES.values():
        if kind == t.name or (isinstance(kind, (int, np.integer)) and not isinstance(kind, bool)
                              and int(kind) == t.type_id):
            return t
    raise ValueError(f"unsupported tensor type {kind!r}: the book reads "
                     f"{', '.join(QUANT_TYPES)} (a GGUF file quantised otherwise, e.g. Q4_K, "
                     f"cannot be loaded)")


def bits_per_weight(kind) -> float:
    """Bits one number takes in type ``kind``, its block's scales included."""
    return quant_type(kind).bits_per_weight


def tensor_bytes(kind, shape) -> int:
    """Bytes a tensor of ``shape`` takes in type ``kind``.

    Parameters
    ----------
    kind : str or int
    shape : tuple of int
        numpy order (rows first); the last axis (a row) must be a whole number of blocks.

    Returns
    -------
    int
    """
    t = quant_type(kind)
    shape = tuple(int(n) for n in shape)
    if not shape or any(n < 1 for n in shape):
        raise ValueError(f"shape must be one or more positive sizes, got {shape}")
    if shape[-1] % t.block_size:
        raise ValueError(f"a {t.name} row holds blocks of {t.block_size} numbers, but the "
                         f"shape {shape} has rows of {shape[-1]}")
    return math.prod(shape) // t.block_size * t.type_size


def _halves(blocks: np.ndarray, offset: int) -> np.ndarray:
    """The 32 four-bit numbers of each block, (n, 32) uint8: low nibbles, then high."""
    packed = blocks[:, offset:offset + 16]  # (n, 16): byte i holds numbers i and i + 16
    return np.concatenate([packed & 0x0F, packed >> 4], axis=1)  # (n, 32)


def _scale(blocks: np.ndarray, offset: int) -> np.ndarray:
    """A float16 per block at byte ``offset``, widened to float32: (n, 1)."""
    return blocks[:, offset:offset + 2].copy().view("<f2").astype(np.float32)  # (n, 1)


def dequantize(data, kind, shape) -> np.ndarray:
    """Decode a GGUF tensor's bytes into float32 numbers.

    Parameters
    ----------
    data : array_like of uint8
        The tensor's raw bytes, as stored (any shape: they are read in order).
    kind : str or int
        Its type: "F32", "F16", "Q4_0", "Q4_1" or "Q8_0" (or GGML's number for it).
    shape : tuple of int
        The tensor's shape in numpy order: rows first, so a matrix stored by GGUF as
        ``[n_in, n_out]`` (ne0 = n_in) is ``(n_out, n_in)`` here.

    Returns
    -------
    numpy.ndarray of float32, shape ``shape``

    Raises
    ------
    ValueError
        For an unsupported type, or bytes that do not fit the shape.
    """
    t = quant_type(kind)
    raw = np.ascontiguousarray(np.asarray(data)).view(np.uint8).ravel()  # (bytes,)
    need = tensor_bytes(t.name, shape)
    if raw.size != need:
        raise ValueError(f"a {t.name} tensor of shape {tuple(shape)} takes {need} bytes, "
                         f"got {raw.size}")
    if t.name == "F32":
        return raw.view("<f4").astype(np.float32).reshape(shape)
    if t.name == "F16":
        return raw.view("<f2").astype(np.float32).reshape(shape)
    blocks = raw.reshape(-1, t.type_size)  # (n_blocks, type_size)
    d = _scale(blocks, 0)  # (n, 1)
    if t.name == "Q8_0":
        q = blocks[:, 2:].view(np.int8).astype(np.float32)  # (n, 32)
        x = d * q
    elif t.name == "Q4_0":
        x = d * (_halves(blocks, 2).astype(np.float32) - np.float32(8))  # (n, 32)
    else:  # Q4_1
        x = d * _halves(blocks, 4).astype(np.float32) + _scale(blocks, 2)  # (n, 32)
    return x.reshape(shape)
