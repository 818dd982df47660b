"""Reusing gradient buffers nobody else can see (PyTorch's buffer stealing), decided by reference counts.

The engine hands a gradient it computed to ``.grad`` or to the caller of ``grad``; when no other
object refers to that array it is handed over as is, else a copy is.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from funcgrad.core.structured import Structured

__all__ = ["owned", "unshared"]


def _calibrate_refcount() -> int:
    """The reference count ``owned`` sees for a buffer that only its caller's local variable holds."""
    def probe(grad: np.ndarray) -> int:
        return sys.getrefcount(grad)

    def caller() -> int:
        grad = np.empty(1)
        return probe(grad)

    return caller()


_ALONE = _calibrate_refcount()


def owned(grad: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Return ``grad`` itself when nobody else can see it, else a fresh copy (PyTorch's buffer stealing)."""
    if (grad.base is None and grad.flags.writeable and grad.flags.c_contiguous and grad.dtype == dtype
            and sys.getrefcount(grad) <= _ALONE):
        return grad
    return np.array(grad, dtype=dtype, copy=True)


def unshared(g: Any) -> np.ndarray:
    """``g`` as an array nothing else can see: itself when nothing else refers to its memory, else a copy."""
    if isinstance(g, Structured):
        return g.dense()  # a new array
    return np.array(g, copy=True) if _shared(g) else g


def _shared(g: Any) -> bool:
    """True unless ``g`` is an array nothing else can see: it owns its memory, or it views an array
    that only it still refers to (a reshape of a temporary of the pass), so it can be returned as is."""
    if type(g) is not np.ndarray or not g.flags.writeable:
        return True
    return g.base is not None and _base_refs(g) > _SOLE_BASE_REFS


def _base_refs(view: np.ndarray) -> int:
    return sys.getrefcount(view.base)


_SOLE_BASE_REFS = _base_refs(np.zeros(1)[:1])  # the view's own reference plus the call's argument
