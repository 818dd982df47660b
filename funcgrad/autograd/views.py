"""Views: tensors that share memory (and the version counter) with a base tensor.

A view remembers its base and a *view function* that recreates it from the base with funcgrad's
view ops, so the same function works on arrays and on Tensors. In-place operations on a view use it
to rewrite the history of the base (PyTorch's CopySlices).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

ViewFn = Callable[[Any], Any]


def mark_view(out: Any, source: Any, step: ViewFn) -> None:
    """Record that ``out`` = ``step(source)`` shares ``source``'s memory (when NumPy made a view)."""
    if not np.may_share_memory(out.data, source.data):
        return  # NumPy had to copy (e.g. reshape of a non-contiguous array): not a view
    src_extra = source._extra
    if src_extra is not None and src_extra.base is not None:
        base, parent = src_extra.base, src_extra.view_fn
        view_fn: ViewFn = lambda b: step(parent(b))  # noqa: E731
    else:
        base, view_fn = source, step
    extra = out._get_extra()
    extra.base = base
    extra.view_fn = view_fn
    out._version_counter = source._version_counter


def inplace_on_view(view: Any, fn: Any, args: Any, kwargs: Any) -> Any:
    """Apply an in-place op to a view of a tensor whose history is recorded."""
    raise NotImplementedError("in-place operations on views of tensors that require grad are not "
                              "supported yet; apply the operation to a clone() instead")
