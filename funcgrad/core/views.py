"""Views: tensors that share memory (and the version counter) with a base tensor.

A view remembers its base and a *view function* that recreates it from the base with funcgrad's
view ops, so the same function works on arrays, on Tensors and on gradients. An in-place operation
on a view rewrites the history of the base (``funcgrad.ops.inplace``), and every live view of that
base gets its history recreated from the new base (``refresh_views``).
"""
from __future__ import annotations

import weakref
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
    base_extra = base._get_extra()
    if base_extra.views is None:
        base_extra.views = []
    base_extra.views.append(weakref.ref(out))


def refresh_views(base: Any, skip: Any = None) -> None:
    """Give every live view of ``base`` a history that starts at the base's current history."""
    extra = base._extra
    if extra is None or not extra.views:
        return
    alive = [v for v in (ref() for ref in extra.views) if v is not None]
    extra.views = [weakref.ref(v) for v in alive]
    if not base._requires_grad:
        return
    for view in alive:
        if view is not skip:
            fresh = view._extra.view_fn(base)
            view.grad_fn, view.output_nr, view._requires_grad = fresh.grad_fn, fresh.output_nr, fresh._requires_grad
    extra.views = [ref for ref in extra.views if ref() is not None]
