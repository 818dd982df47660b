"""What gradcheck differentiates: arguments flattened to leaves with labels, fresh leaves for the inputs that
require grad, and the function reduced to the outputs whose Jacobians are checked. No checking happens here.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.core.tensor import Tensor

__all__ = ["as_tuple", "tensor_outputs", "checked_outputs", "prepare", "layout_copy"]


def as_tuple(value: Any) -> tuple[Any, ...]:
    """A tuple or list as a tuple, anything else as a 1-tuple."""
    return tuple(value) if isinstance(value, tuple | list) else (value,)


def tensor_outputs(func: Callable[..., Any], inputs: Sequence[Any]) -> tuple[Tensor, ...]:
    """The floating-point Tensor outputs of ``func``, the ones whose Jacobians are checked."""
    return tuple(o for o in as_tuple(func(*inputs)) if isinstance(o, Tensor) and o.dtype.kind in "fc")


def _float_outputs(result: Any) -> list[tuple[int, Tensor]]:
    """``(position, output)`` of every floating-point output; NumPy arrays and floats become constant Tensors."""
    found = []
    for p, o in enumerate(as_tuple(result)):
        if not isinstance(o, Tensor) and isinstance(o, np.ndarray | np.floating | float | complex):
            o = Tensor(np.asarray(o))
        if isinstance(o, Tensor) and o.dtype.kind in "fc":
            found.append((p, o))
    return found


def checked_outputs(func: Callable[..., Any], inputs: Sequence[Any]) -> tuple[Callable[..., Any], bool]:
    """``func`` reduced to the outputs whose Jacobians are checked, and whether any of them is differentiable.

    As PyTorch: the outputs that require grad; when none does, every floating-point output, whose numerical
    gradient must then be zero (a function computed outside autograd has no gradient at all).
    """
    result = func(*inputs)
    found = _float_outputs(result)
    keep = [p for p, o in found if o.requires_grad]
    differentiable = bool(keep)
    keep = keep if differentiable else [p for p, _ in found]
    if len(keep) == len(found) and len(tensor_outputs(lambda: result, ())) == len(found):
        return func, differentiable  # every output is a checked Tensor: no wrapper in the hot loop

    def checked(*args: Any) -> tuple[Tensor, ...]:
        selected = dict(_float_outputs(func(*args)))
        return tuple(selected[p] for p in keep)

    return checked, differentiable


def _flatten(args: tuple[Any, ...]) -> tuple[list[Any], list[str], Callable[[Sequence[Any]], tuple[Any, ...]]]:
    """The leaves of arguments that nest lists or tuples (``cat([a, b])``), their labels, and a rebuilder."""
    leaves: list[Any] = []
    labels: list[str] = []

    def walk(value: Any, label: str) -> Callable[[Sequence[Any]], Any]:
        if isinstance(value, list | tuple):
            parts = [walk(v, f"{label}[{k}]") for k, v in enumerate(value)]
            return lambda flat: type(value)(part(flat) for part in parts)
        leaves.append(value)
        labels.append(label)
        pos = len(leaves) - 1
        return lambda flat: flat[pos]

    builders = [walk(a, f"input {i}") for i, a in enumerate(args)]
    return leaves, labels, lambda flat: tuple(build(flat) for build in builders)


def layout_copy(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` with its memory layout (strides: transposed, sliced, reversed), as PyTorch's gradcheck checks
    a non-contiguous input as given: a backward that is wrong only for some layout must not pass on a C copy.
    Overlapping layouts (a broadcast's zero strides) are copied compactly, in the order of ``a``'s strides."""
    if a.flags.c_contiguous:
        return np.array(a, copy=True, order="C")
    span = a.itemsize
    for stride, n in sorted((abs(s), n) for s, n in zip(a.strides, a.shape) if n > 1):
        if stride < span or stride % a.itemsize:
            return np.array(a, copy=True, order="K")
        span += stride * (n - 1)
    out = np.lib.stride_tricks.as_strided(np.empty(span // a.itemsize, a.dtype), a.shape, [abs(s) for s in a.strides])
    out = out[tuple(slice(None, None, -1 if s < 0 else 1) for s in a.strides)]
    out[...] = a
    return out


def prepare(func: Callable[..., Any], inputs: Any) -> tuple[Callable[..., Any], tuple[Any, ...], list[int],
                                                               list[str]]:
    """``func`` over flat arguments, fresh leaves (with the memory layout of the originals) for the tensors that
    require grad (other arguments unchanged), the positions of those leaves and every argument's label."""
    leaves, labels, rebuild = _flatten(as_tuple(inputs))
    prepared = tuple(Tensor(layout_copy(a.data), requires_grad=True)
                     if isinstance(a, Tensor) and a.requires_grad else a for a in leaves)
    indices = [i for i, a in enumerate(leaves) if isinstance(a, Tensor) and a.requires_grad]

    def flat_func(*flat: Any) -> Any:
        return func(*rebuild(flat))

    nested = any(isinstance(a, list | tuple) for a in as_tuple(inputs))
    return flat_func if nested else func, prepared, indices, labels
