"""What the op layer gives the core when it is imported: the Tensor methods and operators (the op
table's functions, their in-place forms, ``T``, ``mT``, ``mH``, ``H``), and the engine's gradient space
("sum to shape" and "cast", HIPS autograd's ``register_vspace`` idea)."""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad import ops
from funcgrad.core.engine import register_gradient_space
from funcgrad.core.tensor import Tensor
from funcgrad.ops import kernels, numpy_protocols
from funcgrad.ops.inplace import inplace, restride
from funcgrad.ops.registry import COMPOSITES, METHODS, SIGNATURES

__all__ = ["install"]


def _double(self: Tensor) -> Tensor:
    """``to(float64)``."""
    return self.to(np.float64)


def _float(self: Tensor) -> Tensor:
    """``to(float32)``, as torch's ``Tensor.float``."""
    return self.to(np.float32)


def _transposed(self: Tensor) -> Tensor:
    """All dimensions reversed."""
    return ops.permute(self, tuple(range(self.data.ndim - 1, -1, -1)))


def _t(self: Tensor) -> Tensor:
    """The transpose of a matrix; a vector or a scalar as it is (torch's ``Tensor.t``, a view)."""
    if self.data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.data.ndim}D")
    return _transposed(self)


def _matrix_transposed(self: Tensor) -> Tensor:
    """The last two dimensions swapped (a batch of matrices transposed)."""
    return ops.transpose(self, -2, -1)


def _matrix_adjoint(self: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions (torch's ``mH``; ``mT`` for real values)."""
    return ops.conj(ops.transpose(self, -2, -1))


def _adjoint(self: Tensor) -> Tensor:
    """The conjugate transpose of a matrix (torch's ``H``: 2-D only)."""
    if self.data.ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.data.ndim}-D tensor. "
                           "For batches of matrices, consider using tensor.mH")
    return _matrix_adjoint(self)


def _sum_to(grad: Any, shape: tuple[int, ...], batch: int) -> Any:
    """Sum a gradient of a broadcast shape down to ``shape`` (keeping ``batch`` leading dims)."""
    if batch:
        extra = len(grad.shape) - batch - len(shape)  # dims broadcasting put between the batch dims and shape
        if extra:
            grad = ops.sum(grad, dim=tuple(range(batch, batch + extra)))
        return ops.sum_to(grad, tuple(grad.shape[:batch]) + tuple(shape))
    if type(grad) is np.ndarray:  # nothing to record: the kernel itself (an op call costs more than the sum)
        return kernels.sum_to(grad, shape)
    return ops.sum_to(grad, shape)


def _cast(grad: Any, dtype: np.dtype) -> Any:
    """A gradient cast to its input's dtype (recorded when it is a Tensor, under create_graph); a complex
    gradient of a real input is its real part, as torch."""
    if grad.dtype.kind == "c" and dtype.kind != "c":
        grad = ops.real(grad)
        if grad.dtype == dtype:
            return grad
    return ops.to_copy(grad, dtype)


def _stack(grads: list[Any]) -> Any:
    """Gradients stacked along a new leading dim (recorded when any is a Tensor, under create_graph)."""
    return ops.stack(grads)


def _reflected(fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Tensor, other: Any) -> Any:
        return fn(other, self)
    return method


def _in_place(fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return inplace(self, fn, *args, **kwargs)
    method.__doc__ = f"In-place {fn.__name__}: self = {fn.__name__}(self, ...); bumps the version."
    return method


def _restride_method(name: str, view_op: Callable[..., Any],
                     undo: Callable[[Tensor, tuple[int, ...], tuple[Any, ...]], Any]) -> Callable[..., Tensor]:
    def method(self: Tensor, *args: Any) -> Tensor:
        shape = self.data.shape
        return restride(self, view_op, lambda t: undo(t, shape, args), *args)
    method.__name__ = f"{name}_"
    method.__doc__ = f"In-place {name}: this tensor seen with the new shape (same memory); bumps the version."
    return method


def _reshaped_back(t: Any, shape: tuple[int, ...], args: tuple[Any, ...]) -> Any:
    return ops.reshape(t, shape)


def _transposed_back(t: Any, shape: tuple[int, ...], args: tuple[Any, ...]) -> Any:
    return ops.transpose(t, *args) if args else _transposed(t)


# shape-changing in-place forms: name -> (the view op, its inverse given the old shape and the arguments)
_RESTRIDES: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "t": (_t, _transposed_back), "transpose": (ops.transpose, _transposed_back),
    "swapdims": (ops.transpose, _transposed_back), "swapaxes": (ops.transpose, _transposed_back),
    "squeeze": (ops.squeeze, _reshaped_back), "unsqueeze": (ops.unsqueeze, _reshaped_back),
}


def install() -> None:
    """Give Tensor the op table's functions as methods, plus Python's operators and in-place forms, and
    give the engine its gradient space."""
    register_gradient_space(_sum_to, _cast, _stack)
    Tensor.double = _double  # type: ignore[attr-defined]
    Tensor.float = _float  # type: ignore[attr-defined]
    Tensor.T = property(_transposed)  # type: ignore[attr-defined]
    Tensor.t = _t  # type: ignore[attr-defined]
    Tensor.mT = property(_matrix_transposed)  # type: ignore[attr-defined]
    Tensor.mH = property(_matrix_adjoint)  # type: ignore[attr-defined]
    Tensor.H = property(_adjoint)  # type: ignore[attr-defined]
    for name, spec in ops.OPS.items():
        # only an op of the tensor ``x`` is its method: where(condition, x, y), cat(tensors), linear(input, ...) are not
        is_method = spec.params[:1] == ("x",) and "x" in spec.rules and not name.startswith("linalg_")
        if is_method and not hasattr(Tensor, name):
            setattr(Tensor, name, getattr(ops, name))
    for name, fn in COMPOSITES.items():
        params = list(inspect.signature(fn).parameters)
        if params and params[0] == "x" and not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    for name, fn in {**METHODS, **SIGNATURES}.items():
        setattr(Tensor, name, fn)

    binary = {"add": ops.add, "sub": ops.sub, "mul": ops.mul, "truediv": ops.div, "floordiv": ops.floor_divide,
              "mod": ops.remainder, "pow": ops.pow}
    for name, fn in binary.items():
        setattr(Tensor, f"__{name}__", fn)
        # ``2 * t`` is ``mul(t, 2)``, as torch records it (the op itself: no wrapper call); others swap back
        setattr(Tensor, f"__r{name}__", fn if name in ("add", "mul") else _reflected(fn))
        setattr(Tensor, f"__i{name}__", _in_place(fn))
    for name, fn in {"eq": ops.eq, "ne": ops.ne, "lt": ops.lt, "le": ops.le, "gt": ops.gt, "ge": ops.ge}.items():
        setattr(Tensor, f"__{name}__", fn)
    Tensor.real = property(ops.real, doc="The real part (a view, as torch's; differentiable).")  # type: ignore[attr-defined]
    Tensor.imag = property(ops.imag, doc="The imaginary part of a complex tensor (a view).")  # type: ignore[attr-defined]
    Tensor.__neg__ = ops.neg  # type: ignore[attr-defined]
    Tensor.__abs__ = ops.abs  # type: ignore[attr-defined]
    Tensor.__invert__ = ops.logical_not  # type: ignore[attr-defined]
    Tensor.__and__ = ops.logical_and  # type: ignore[attr-defined]
    Tensor.__or__ = ops.logical_or  # type: ignore[attr-defined]
    Tensor.__xor__ = ops.logical_xor  # type: ignore[attr-defined]
    for name in ("add", "sub", "mul", "div", "pow", "clamp", "exp", "log", "sqrt", "neg", "abs", "sin", "cos",
                 "tanh", "sigmoid", "relu", "floor", "ceil", "round", "sign", "remainder", "reciprocal", "masked_fill",
                 "scatter", "scatter_add", "log1p", "expm1", "square", "rsqrt", "erf", "tan", "asin", "atan", "log2",
                 "log10", "trunc", "sgn", "exp2", "lerp", "addcmul", "addcdiv", "nan_to_num", "logit", "xlogy", "frac",
                 "fmod", "deg2rad", "rad2deg", "true_divide", "tril", "triu", "index_add", "index_fill", "clamp_min",
                 "clamp_max", "clip", "acos", "acosh", "asinh", "atanh", "cosh", "sinh", "erfc", "lgamma", "digamma",
                 "hypot", "atan2", "logaddexp", "cumsum", "cumprod", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
                 "logical_or", "logical_xor", "logical_not", "absolute", "negative", "multiply", "divide", "subtract",
                 "fix", "copysign", "conj_physical", "floor_divide", "arccos", "arcsin", "arctan", "arctan2",
                 "index_copy", "masked_scatter"):
        setattr(Tensor, f"{name}_", _in_place(SIGNATURES.get(name) or getattr(ops, name)))
    for name, (view_op, undo) in _RESTRIDES.items():
        setattr(Tensor, f"{name}_", _restride_method(name, view_op, undo))
    Tensor.fill_ = _in_place(ops.fill)  # type: ignore[attr-defined]
    Tensor.copy_ = _in_place(ops.copy)  # type: ignore[attr-defined]
    Tensor.zero_ = lambda self: inplace(self, ops.fill, 0)  # type: ignore[attr-defined]
    numpy_protocols.install()
