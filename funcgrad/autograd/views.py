"""Views: tensors that share memory (and the version counter) with a base tensor.

A view remembers its base and a *view function* that recreates it from the base with funcgrad's
view ops, so the same function works on arrays, on Tensors and on gradients. An in-place operation
on a view rewrites the history of the base as ``copy_slices(base, op(view), view_fn)`` (PyTorch's
CopySlices), and every live view of that base gets its history recreated from the new base.
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


def inplace_on_view(view: Any, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                    records: bool = True) -> Any:
    """``fn`` applied in place to ``view``: the base's history becomes ``copy_slices(base, fn(view))``
    (when ``records``); a forward-mode tangent flows the same way."""
    from funcgrad.autograd import forward_ad
    from funcgrad.ops import copy_slices
    from funcgrad.tensor import Tensor, _write

    base = view._extra.base
    if records and base._requires_grad and base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation. "
                           "Wrap the update in `with funcgrad.no_grad():` or work on a clone().")
    view_fn = view._extra.view_fn
    current = view_fn(base)  # the view's values, with a history starting at the base's current one
    old = (Tensor._from_node(current.data.copy(), current.grad_fn, current.output_nr, [0])
           if current.grad_fn is not None else Tensor._wrap(current.data.copy()))
    forward_ad.carry_tangent(view, old)
    new_base = copy_slices(base, fn(old, *args, **kwargs), view_fn)
    _write(base, new_base.data)
    if records:
        base.grad_fn, base.output_nr, base._requires_grad = new_base.grad_fn, 0, new_base._requires_grad
        refresh_views(base)
    forward_ad.inplace_tangent(base, new_base)
    return view
