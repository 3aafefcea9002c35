"""Token bitmasks for NumPy arrays and torch tensors.

A token bitmask over a vocabulary of ``vocab_size`` tokens is ``int32[ceil(vocab_size / 32)]``;
bit ``id % 32`` of word ``id // 32`` is set iff token ``id`` is allowed (XGrammar's and
vLLM's layout). A batch is ``int32[batch, ceil(vocab_size / 32)]``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np


def bitmask_words(vocab_size: int) -> int:
    """Words of one token bitmask: ``ceil(vocab_size / 32)``."""
    return (int(vocab_size) + 31) // 32


def _have_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def allocate_token_bitmask(batch_size: int, vocab_size: int, backend: Optional[str] = None) -> Any:
    """A bitmask for ``batch_size`` sequences, every token allowed (all bits set).

    Shape ``(batch_size, ceil(vocab_size / 32))``, dtype int32, on the CPU. ``backend``:
    ``"numpy"``, ``"torch"``, or ``None`` for a torch tensor when torch is installed and a
    NumPy array otherwise. Raises ``ValueError`` for a negative size.
    """
    if batch_size < 0 or vocab_size <= 0:
        raise ValueError(f"batch_size must be >= 0 and vocab_size > 0 (got {batch_size}, {vocab_size})")
    if backend is None:
        backend = "torch" if _have_torch() else "numpy"
    shape = (int(batch_size), bitmask_words(vocab_size))
    if backend == "torch":
        import torch
        return torch.full(shape, -1, dtype=torch.int32)
    if backend == "numpy":
        return np.full(shape, -1, dtype=np.int32)
    raise ValueError(f"backend must be 'numpy', 'torch' or None, not {backend!r}")


def _unpack_numpy(bitmask: np.ndarray, vocab_size: int) -> np.ndarray:
    words = np.ascontiguousarray(bitmask).view(np.uint32)
    if words.ndim == 1:
        words = words[None, :]
    ids = np.arange(vocab_size)
    return ((words[:, ids >> 5] >> (ids & 31).astype(np.uint32)) & 1).astype(bool)


def apply_token_bitmask_inplace(logits: Any, bitmask: Any, vocab_size: Optional[int] = None,
                                indices: Optional[Sequence[int]] = None) -> None:
    """Sets to -inf, in place, every logit whose token the bitmask forbids.

    ``logits``: float[batch, n] or float[n] (NumPy array or torch tensor, any float dtype,
    any device for torch). ``bitmask``: int32[batch, ceil(m / 32)] or int32[ceil(m / 32)].
    Tokens ``>= vocab_size`` (default ``min(n, 32 × words)``) are left as they are.
    ``indices``: the logits rows to mask (row ``indices[i]`` of ``logits`` takes row
    ``indices[i]`` of the bitmask); default all rows, row for row.
    """
    if isinstance(logits, np.ndarray):
        n = logits.shape[-1]
        words = bitmask.shape[-1]
        v = min(n, 32 * words) if vocab_size is None else min(int(vocab_size), n, 32 * words)
        allowed = _unpack_numpy(np.asarray(bitmask), v)
        if logits.ndim == 1:
            logits[:v][~allowed[0]] = -np.inf
            return
        rows = range(logits.shape[0]) if indices is None else indices
        for r in rows:
            logits[r, :v][~allowed[r if allowed.shape[0] > 1 else 0]] = -np.inf
        return
    import torch
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"logits must be a NumPy array or a torch tensor, not {type(logits).__name__}")
    if isinstance(bitmask, np.ndarray):
        bitmask = torch.from_numpy(bitmask)
    bitmask = bitmask.to(logits.device)
    n = logits.shape[-1]
    words = bitmask.shape[-1]
    v = min(n, 32 * words) if vocab_size is None else min(int(vocab_size), n, 32 * words)
    ids = torch.arange(v, device=logits.device)
    bm = bitmask if bitmask.dim() == 2 else bitmask.unsqueeze(0)
    allowed = ((bm[:, ids >> 5] >> (ids & 31).to(bm.dtype)) & 1).bool()
    if logits.dim() == 1:
        logits[:v].masked_fill_(~allowed[0], float("-inf"))
        return
    rows = range(logits.shape[0]) if indices is None else indices
    for r in rows:
        logits[r, :v].masked_fill_(~allowed[r if allowed.shape[0] > 1 else 0], float("-inf"))


__all__ = ["bitmask_words", "allocate_token_bitmask", "apply_token_bitmask_inplace"]
