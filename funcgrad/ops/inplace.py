"""In-place operations: ``x.add_(y)``, ``x += y``, ``x[i] = v``.

The result of the out-of-place op is written into the tensor's memory (bumping its version) and
becomes the tensor's new history. On a view, the base's history becomes
``copy_slices(base, op(view), view_fn)`` (PyTorch's CopySlices); a forward-mode tangent flows the same way.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from funcgrad import ops
from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.grad_mode import NO_VERSION, STATE, check_inference_inplace
from funcgrad.core.tangents import carry_tangent, has_tangent
from funcgrad.core.tensor import Tensor
from funcgrad.core.views import check_inplace_on_view, refresh_views, set_history
from funcgrad.ops.jvp import inplace_tangent
from funcgrad.ops.kernels import overlaps, writable_view

__all__ = ["write", "inplace", "inplace_on_view", "rebase_view", "restride"]


def write(target: Tensor, result: Any) -> None:
    """Copy ``result`` into ``target``'s memory and bump its version."""
    shape = np.shape(result)
    if shape != target.data.shape and np.broadcast_shapes(shape, target.data.shape) != target.data.shape:
        raise RuntimeError(f"output with shape {list(target.data.shape)} doesn't match the broadcast shape "
                           f"{list(np.broadcast_shapes(shape, target.data.shape))}")
    memory = _memory(target)
    try:
        np.copyto(memory, result, casting="same_kind")
    except TypeError:
        raise RuntimeError(f"result type {np.result_type(result)} can't be cast to the desired output type "
                           f"{target.data.dtype}") from None
    counter = target._version_counter
    if counter is not NO_VERSION:  # inference tensors count no versions, as torch
        counter[0] += 1


def _check_no_overlap(target: Tensor) -> None:
    """PyTorch's error for a write into a tensor whose elements share memory (an expanded one)."""
    if overlaps(target.data):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to "
                           "a single memory location. Please clone() the tensor before performing the operation.")


def _memory(target: Tensor) -> np.ndarray:
    """``target``'s memory as a writable array: its data, made writable through its base for a view that went
    through an expand (as torch, a part of an expanded tensor whose elements do not overlap may be written)."""
    memory = target.data
    if memory.flags.writeable and 0 not in memory.strides:  # (the common case, checked first: no other cost)
        return memory
    _check_no_overlap(target)
    if target._base is not None:
        memory = writable_view(memory, target._base.data)
    if not memory.flags.writeable:
        raise RuntimeError("unsupported operation: the written-to tensor is read-only (its NumPy array is not "
                           "writeable). Please clone() the tensor before performing the operation.")
    return memory


def inplace(self: Tensor, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Tensor:
    """Run ``fn(self, *args)`` and store the result in ``self``, recording it as self's new history."""
    if self._version_counter is NO_VERSION:
        check_inference_inplace()
    if self._requires_grad and self.grad_fn is None and STATE.grad_enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation. "
                           "Wrap the update in `with funcgrad.no_grad():` (as optimizers do) or work on a "
                           "clone().")
    extra = self._extra
    if extra is not None and extra.creation is not None and STATE.grad_enabled:
        check_inplace_on_view(self, args)  # a view from split, no_grad, a custom Function...: PyTorch's error
    dual = False
    if DISPATCH.active:  # anomaly mode notes the op (for a later version error); forward AD carries tangents
        DISPATCH.note_inplace(self, fn.__name__, args)
        dual = has_tangent(self, *args)

    records = STATE.grad_enabled and (self._requires_grad or any(
        isinstance(a, Tensor) and a._requires_grad for a in args))
    if not records and not dual:
        plain = [a.data if isinstance(a, Tensor) else a for a in args]
        write(self, fn(self.data, *plain, **kwargs))
        return self
    if self._base is not None:
        return inplace_on_view(self, fn, args, kwargs, records)
    old = (Tensor._from_node(self.data.copy(), self.grad_fn, self.output_nr, [0]) if self.grad_fn is not None
           else Tensor._wrap(self.data.copy()))
    if dual:
        carry_tangent(self, old)
    result = fn(old, *args, **kwargs)
    write(self, result.data)
    if records:
        set_history(self, result.grad_fn, result.output_nr, result._requires_grad)
        refresh_views(self)
    if dual:
        inplace_tangent(self, result)
    return self


def inplace_on_view(view: Any, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                    records: bool = True) -> Any:
    """``fn`` applied in place to ``view``: the base's history becomes ``copy_slices(base, fn(view))``
    (when ``records``); a forward-mode tangent flows the same way."""
    base = view._extra.base
    if records and base._requires_grad and base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation. "
                           "Wrap the update in `with funcgrad.no_grad():` or work on a clone().")
    _check_no_overlap(view)  # (else copy_slices would write several values into one element)
    view_fn = view._extra.view_fn
    current = view_fn(base)  # the view's values, with a history starting at the base's current one
    old = (Tensor._from_node(current.data.copy(), current.grad_fn, current.output_nr, [0])
           if current.grad_fn is not None else Tensor._wrap(current.data.copy()))
    carry_tangent(view, old)
    new_base = ops.copy_slices(base, fn(old, *args, **kwargs), view_fn)
    write(base, new_base.data)
    if records:
        set_history(base, new_base.grad_fn, 0, new_base._requires_grad)
        refresh_views(base)
    inplace_tangent(base, new_base)
    return view


def rebase_view(view: Tensor) -> None:
    """``view`` was written in place by a recorded node that is now its history (a custom Function with
    ``ctx.mark_dirty``): the base's history becomes ``copy_slices(base, view)``, and every live view of the
    base (``view`` too) gets its history recreated from it."""
    base = view._extra.base
    new_base = ops.copy_slices(base, view, view._extra.view_fn)
    set_history(base, new_base.grad_fn, 0, new_base._requires_grad)
    refresh_views(base)


def restride(self: Tensor, view_op: Callable[..., Any], undo: Callable[[Any], Any], *args: Any) -> Tensor:
    """``self`` becomes ``view_op(self, *args)`` in place (``t_``, ``squeeze_``, ...): the same memory seen with
    another shape, the view op as its newest history, and a version bump, as torch. ``undo`` maps the new
    shape back to the old one, so the tensor's existing views keep seeing the same elements."""
    if self._version_counter is NO_VERSION:
        check_inference_inplace()
    if self._requires_grad and self.grad_fn is None and STATE.grad_enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    out = view_op(self, *args)
    extra = self._extra
    if extra is not None and extra.views:  # the views of self were made from the old shape
        for view in (ref() for ref in extra.views):
            if view is not None and view is not out:
                view._extra.view_fn = partial(_after, undo, view._extra.view_fn)
    if extra is not None and extra.base is not None:
        extra.view_fn = out._extra.view_fn  # self's own view function gains the step
    self.data = out.data
    if STATE.grad_enabled and out._requires_grad:
        set_history(self, out.grad_fn, out.output_nr, True)
    counter = self._version_counter
    if counter is not NO_VERSION:
        counter[0] += 1
    return self


def _after(first: Callable[[Any], Any], then: Callable[[Any], Any], base: Any) -> Any:
    """``then(first(base))``: a view function composed with a step before it."""
    return then(first(base))
