"""NumPy's protocols on Tensor: ``np.sin(t)``, ``ndarray @ t``, ``np.sum(t, axis=0)`` run the op table.

``__array_ufunc__`` maps each NumPy ufunc that has a rule to its table op (so first, higher and
forward-mode derivatives come from the one table), its ``reduce``/``accumulate``/``outer`` methods to
the matching reductions and scans, and ``out=`` a Tensor to the in-place op. ``__array_function__``
looks the NumPy function up in ``numpy_functions.FUNCTIONS`` (``numpy_fft`` adds np.fft's). Anything
without a rule raises a TypeError naming it: a Tensor never silently becomes an ndarray (and
``np.asarray(t)`` refuses a Tensor that requires grad while grad mode is on, as torch's ``numpy()`` does:
see ``Tensor.__array__``).

This module also gives Tensor the ndarray methods NumPy code calls (``astype``, ``ravel``, ``copy``,
``dot``, ``any``, ``clip``, ``swapaxes``, ``max(axis=...)``, the ``size`` attribute, ...); the table's
ops accept NumPy's keywords ``axis``/``keepdims``/``ddof`` themselves (``registry.NUMPY_KEYWORDS``).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

import funcgrad.ops as F
from funcgrad.core.tensor import Tensor
from funcgrad.ops import numpy_fft  # noqa: F401  (registers np.fft's functions in FUNCTIONS)
from funcgrad.ops.inplace import inplace
from funcgrad.ops.numpy_functions import FUNCTIONS, dot

__all__ = ["UFUNCS", "install"]

# ----- the ufuncs with a rule, by NumPy name ------------------------------------------------------------
UFUNCS: dict[np.ufunc, Callable[..., Any]] = {
    np.add: F.add, np.subtract: F.sub, np.multiply: F.mul, np.true_divide: F.div, np.negative: F.neg,
    np.positive: F.clone, np.power: F.pow, np.remainder: F.remainder, np.floor_divide: F.floor_divide,
    np.reciprocal: F.reciprocal, np.matmul: F.matmul,
    np.exp: F.exp, np.exp2: F.exp2, np.expm1: F.expm1, np.log: F.log, np.log2: F.log2, np.log10: F.log10,
    np.log1p: F.log1p, np.sqrt: F.sqrt, np.cbrt: F.cbrt, np.square: F.square, np.logaddexp: F.logaddexp,
    np.sin: F.sin, np.cos: F.cos, np.tan: F.tan, np.arcsin: F.asin, np.arccos: F.acos, np.arctan: F.atan,
    np.arctan2: F.atan2, np.hypot: F.hypot, np.sinh: F.sinh, np.cosh: F.cosh, np.tanh: F.tanh,
    np.arcsinh: F.asinh, np.arccosh: F.acosh, np.arctanh: F.atanh,
    np.absolute: F.abs, np.fabs: F.abs, np.sign: F.sign, np.floor: F.floor, np.ceil: F.ceil, np.rint: F.round,
    np.trunc: F.trunc, np.maximum: F.maximum, np.minimum: F.minimum, np.fmax: F.fmax, np.fmin: F.fmin,
    np.equal: F.eq, np.not_equal: F.ne, np.less: F.lt, np.less_equal: F.le, np.greater: F.gt,
    np.greater_equal: F.ge, np.logical_and: F.logical_and, np.logical_or: F.logical_or,
    np.logical_xor: F.logical_xor, np.logical_not: F.logical_not, np.isnan: F.isnan, np.isinf: F.isinf,
    np.isfinite: F.isfinite, np.conjugate: F.conj,
}


def _deg2rad(x: Any) -> Any:
    """Degrees to radians: x pi / 180."""
    return F.mul(x, np.pi / 180)


def _rad2deg(x: Any) -> Any:
    """Radians to degrees: x 180 / pi."""
    return F.mul(x, 180 / np.pi)


def _logaddexp2(x: Any, y: Any) -> Any:
    """log2(2^x + 2^y) = logaddexp(x ln 2, y ln 2) / ln 2 (a Python number scaled as one, to keep float32)."""
    def scaled(v: Any) -> Any:
        return v * math.log(2) if isinstance(v, int | float) else F.mul(v, math.log(2))
    return F.div(F.logaddexp(scaled(x), scaled(y)), math.log(2))


def _vecdot(x: Any, y: Any) -> Any:
    """NumPy's vecdot ufunc: sum(conj(x) * y) over the last axis."""
    return F.sum(F.mul(F.conj(x), y), -1)


def _sign(x: Any) -> Any:
    """NumPy's sign: -1, 0 or 1, and z / |z| for complex z (torch's sgn)."""
    return F.sgn(x) if np.result_type(x.dtype if isinstance(x, Tensor) else x).kind == "c" else F.sign(x)


UFUNCS.update({np.sign: _sign, np.deg2rad: _deg2rad, np.radians: _deg2rad, np.rad2deg: _rad2deg, np.degrees: _rad2deg,
               np.logaddexp2: _logaddexp2, np.vecdot: _vecdot, np.float_power: F.float_power})


def _numpy_result_dtype(ufunc: np.ufunc) -> None:
    """``UFUNCS[ufunc]`` with NumPy's result dtype, where the op's differs: ``fabs``, ``rint`` and ``cbrt`` make
    integers floats (the input is converted first), ``conjugate`` makes bools int8; a dtype NumPy has no loop for
    (``np.fabs`` of a complex, ``np.positive`` of a bool) raises NumPy's TypeError."""
    op = UFUNCS[ufunc]

    def call(x: Any) -> Any:
        dtype = ufunc.resolve_dtypes((np.result_type(x.dtype), None))[-1]
        return op(x if x.dtype == dtype else F.to_copy(x, dtype))
    call.__name__ = op.__name__
    UFUNCS[ufunc] = call


for _ufunc in (np.fabs, np.rint, np.conjugate, np.positive, np.cbrt):
    _numpy_result_dtype(_ufunc)

# ufunc.reduce and ufunc.accumulate as reductions and scans: (op, NumPy's default axis is 0)
_REDUCE = {np.add: F.sum, np.multiply: F.prod, np.maximum: F.amax, np.minimum: F.amin, np.logaddexp: F.logsumexp}
_ACCUMULATE = {np.add: F.cumsum, np.multiply: F.cumprod}


def _no_rule(what: str) -> TypeError:
    return TypeError(f"{what} has no derivative rule in funcgrad, so it cannot take a Tensor (that would cut "
                     f"the graph). Write it with functions that have one (NumPy's ufuncs and functions listed "
                     f"in funcgrad.ops.numpy_protocols / numpy_functions), define a funcgrad.autograd.Function "
                     f"for it, or apply it to t.detach() where no gradient should flow.")


# ----- __array_ufunc__ ------------------------------------------------------------------------------------
def array_ufunc(self: Tensor, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """NumPy's ufunc protocol: ``np.<ufunc>(..., t, ...)`` is the table op of that name."""
    if method == "__call__" and not kwargs:
        op = UFUNCS.get(ufunc)
        if op is not None:
            return op(*inputs)
    return _ufunc_call(ufunc, method, inputs, kwargs)


def _ufunc_call(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The slower forms: keywords (``out``, ``dtype``), and the ufunc methods. ``dtype`` is the type NumPy
    computes in: the inputs are converted to it first (so ``np.add.reduce([1.5, 2.7], dtype=int)`` is 3)."""
    out = kwargs.pop("out", None)
    dtype = kwargs.pop("dtype", None)
    if method == "__call__":
        op = UFUNCS.get(ufunc)
        if op is None:
            raise _no_rule(f"NumPy's ufunc '{ufunc.__name__}'")
        _unsupported(f"np.{ufunc.__name__}", kwargs)
        if dtype is not None:
            inputs = tuple(_convert(x, dtype, f"ufunc '{ufunc.__name__}' input {i}") for i, x in enumerate(inputs))
        return op(*inputs) if out is None else _into(out, op, inputs)
    if method in ("reduce", "accumulate"):
        table = _REDUCE if method == "reduce" else _ACCUMULATE
        if ufunc not in table:
            raise _no_rule(f"NumPy's np.{ufunc.__name__}.{method}")
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False) if method == "reduce" else None
        _unsupported(f"np.{ufunc.__name__}.{method}", kwargs)
        (x,) = inputs
        if dtype is not None:  # a reduction converts its input to dtype whatever the kinds (NumPy's 'unsafe')
            x = _convert(x, dtype, None)
        if axis is None:
            if method == "accumulate":
                raise ValueError("accumulate does not allow multiple axes")
            x, axis = F.reshape(x, (-1,)), 0
        args = (axis, keepdims) if method == "reduce" else (axis,)
        if out is not None:
            return _into(out, table[ufunc], (x, *args))  # type: ignore[index]
        result = table[ufunc](x, *args)  # type: ignore[index]
        return result if dtype is None else _convert(result, dtype, None)  # (the op may widen small ints)
    if method == "at" and ufunc in (np.add, np.subtract):
        _unsupported(f"np.{ufunc.__name__}.at", kwargs)
        return _add_at(ufunc, *inputs)
    if method == "outer" and ufunc in UFUNCS:
        _unsupported(f"np.{ufunc.__name__}.outer", kwargs)
        x, y = (x if dtype is None else _convert(x, dtype, f"ufunc '{ufunc.__name__}' input {i}")
                for i, x in enumerate(inputs))
        return UFUNCS[ufunc](F.reshape(x, np.shape(x) + (1,) * np.ndim(y)), y)
    raise _no_rule(f"NumPy's np.{ufunc.__name__}.{method}")


def _add_at(ufunc: np.ufunc, a: Any, indices: Any, b: Any) -> None:
    """``np.add.at(a, indices, b)``: ``a[indices] += b`` in place, a repeated index adding each time (and
    ``np.subtract.at`` with -b): the in-place index_put that accumulates."""
    if not isinstance(a, Tensor):
        raise TypeError(f"np.{ufunc.__name__}.at writes into its first argument: with a Tensor among the others it "
                        f"must be a Tensor (an ndarray would cut the graph)")
    values = F.neg(b) if ufunc is np.subtract else b

    def add_at(old: Any, index: Any, v: Any) -> Any:
        return F.index_put(old, index, v, True)

    inplace(a, add_at, indices, values)


def _unsupported(name: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise TypeError(f"{name} on Tensors does not support the keyword(s) {', '.join(sorted(kwargs))}; "
                        f"compute without them (e.g. select with np.where instead of where=)")


def _convert(x: Any, dtype: Any, checked: str | None) -> Any:
    """``x`` as ``dtype`` (a differentiable copy for a Tensor); ``checked`` names it in NumPy's error when the
    conversion is not 'same_kind' (None: any conversion)."""
    dtype = np.dtype(dtype)
    source = x.dtype if isinstance(x, Tensor) else np.asarray(x).dtype
    if checked is not None and not np.can_cast(source, dtype, "same_kind"):
        raise TypeError(f"Cannot cast {checked} from {source!r} to {dtype!r} with casting rule 'same_kind'")
    if source == dtype:
        return x
    return F.to_copy(x, dtype) if isinstance(x, Tensor) else np.asarray(x, dtype)


def _into(out: Any, op: Callable[..., Any], args: tuple[Any, ...]) -> Tensor:
    """``out=target``: the in-place op on ``target`` (its old value stands in wherever it is an input)."""
    (target,) = out if isinstance(out, tuple) else (out,)
    if not isinstance(target, Tensor):
        raise TypeError("out= must be a Tensor when a Tensor is an input: writing into an ndarray would cut "
                        "the graph; drop out= or pass a Tensor")

    def compute(old: Any, *operands: Any) -> Any:
        return op(*[old if a is target else a for a in operands])

    compute.__name__ = getattr(op, "__name__", "out")
    return inplace(target, compute, *args)


# ----- __array_function__ ---------------------------------------------------------------------------------
def array_function(self: Tensor, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """NumPy's function protocol: ``np.<function>(t, ...)`` runs funcgrad's version, with NumPy's signature."""
    handler = FUNCTIONS.get(func)
    if handler is None:
        raise _no_rule(f"NumPy's function {func.__module__}.{func.__name__}")
    return handler(*args, **kwargs)


# ----- ndarray methods ------------------------------------------------------------------------------------
class SizeAndShape(int):
    """``t.size``: the number of elements, as NumPy's ``a.size``; called, the shape, as torch's ``t.size()``.

    Example:
        >>> import funcgrad as fg
        >>> t = fg.zeros(2, 3)
        >>> t.size, t.size(), t.size(1)
        (6, (2, 3), 3)
    """

    shape: tuple[int, ...]

    def __new__(cls, shape: tuple[int, ...]) -> SizeAndShape:
        size = super().__new__(cls, math.prod(shape))
        size.shape = shape
        return size

    def __call__(self, dim: int | None = None) -> tuple[int, ...] | int:
        return self.shape if dim is None else self.shape[dim]


def size(self: Tensor) -> SizeAndShape:
    """The number of elements (NumPy's ``a.size``); ``t.size()`` is the shape and ``t.size(d)`` a length (torch)."""
    return SizeAndShape(self.data.shape)


def astype(self: Tensor, dtype: Any, order: str = "K",
           casting: Literal["no", "equiv", "safe", "same_kind", "unsafe"] = "unsafe", subok: bool = True,
           copy: bool = True) -> Tensor:
    """A differentiable copy converted to ``dtype`` (NumPy's ``astype``: ``casting`` is checked, and with
    ``copy=False`` a tensor of that dtype is returned itself, so writes to the result reach it)."""
    dtype = np.dtype(dtype)
    if not np.can_cast(self.data.dtype, dtype, casting):  # type: ignore[arg-type]  # (NumPy's checks the string)
        raise TypeError(f"Cannot cast array data from {self.data.dtype!r} to {dtype!r} according to the rule "
                        f"{casting!r}")
    if not copy and dtype == self.data.dtype:
        return self
    return F.to_copy(self, dtype)


def ravel(self: Tensor, order: str = "C") -> Tensor:
    """The elements as a 1-D Tensor (NumPy's ``ravel``)."""
    return FUNCTIONS[np.ravel](self, order)


def copy(self: Tensor, order: str = "C") -> Tensor:
    """A differentiable copy (NumPy's ``a.copy()``, torch's ``clone``)."""
    return F.clone(self)


def fill(self: Tensor, value: Any) -> None:
    """Fill with ``value`` in place (NumPy's ``a.fill``; torch's ``fill_``)."""
    inplace(self, F.fill, value)


def transpose(self: Tensor, *axes: Any) -> Tensor:
    """NumPy's ``a.transpose()`` / ``a.transpose(axes)`` / ``a.transpose(*axes)`` (a permutation), except
    that two ints are torch's ``t.transpose(dim0, dim1)`` (a swap; NumPy's 2-D ``a.transpose(0, 1)`` is the
    identity, hardly written on purpose)."""
    if len(axes) == 2 and all(isinstance(a, int) for a in axes):
        return F.transpose(self, *axes)
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], tuple | list)):
        axes = tuple(axes[0]) if axes[0] is not None else ()
    return F.permute(self, axes or tuple(range(self.data.ndim - 1, -1, -1)))


def swapaxes(self: Tensor, axis1: int, axis2: int) -> Tensor:
    """Dims ``axis1`` and ``axis2`` swapped."""
    return F.transpose(self, axis1, axis2)


def clip(self: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Values limited to ``[min, max]`` (NumPy's ``clip``, torch's ``clamp``)."""
    return F.clamp(self, min, max)


def any_(self: Tensor, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether any element is true (a plain NumPy result: there is no gradient)."""
    return np.any(self.data, axis=axis, keepdims=keepdims)


def all_(self: Tensor, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether every element is true (a plain NumPy result: there is no gradient)."""
    return np.all(self.data, axis=axis, keepdims=keepdims)


def _extreme(torch_style: Callable[..., Any], numpy_style: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Tensor, *args: Any, axis: Any = None, keepdims: bool | None = None, **kwargs: Any) -> Any:
        if axis is not None or keepdims is not None:  # NumPy's spelling: the values only
            return numpy_style(self, axis, bool(keepdims), *args, **kwargs)
        return torch_style(self, *args, **kwargs)
    method.__name__ = torch_style.__name__
    method.__doc__ = (f"torch's ``{torch_style.__name__}(dim, keepdim)`` (values and indices with a dim), or "
                      f"NumPy's ``{torch_style.__name__}(axis=, keepdims=)`` (the values only).")
    return method


def _repeat(tiling: Callable[..., Any]) -> Callable[..., Any]:
    def repeat(self: Tensor, *sizes: Any, axis: int | None = None) -> Any:
        """torch's ``t.repeat(*sizes)`` (tiling); with ``axis=``, NumPy's ``a.repeat(repeats, axis)`` (each
        element repeated)."""
        if axis is not None:
            return FUNCTIONS[np.repeat](self, *sizes, axis=axis)
        return tiling(self, *sizes)
    return repeat


def install() -> None:
    """Put the protocols and the ndarray methods on Tensor (called once, with the other methods)."""
    Tensor.__array_ufunc__ = array_ufunc  # type: ignore[attr-defined]
    Tensor.__array_function__ = array_function  # type: ignore[attr-defined]
    Tensor.size = property(size)  # type: ignore[assignment,method-assign]
    methods = {"astype": astype, "ravel": ravel, "copy": copy, "fill": fill, "dot": dot, "transpose": transpose,
               "swapaxes": swapaxes, "clip": clip, "any": any_, "all": all_, "repeat": _repeat(Tensor.repeat),  # type: ignore[attr-defined]
               "max": _extreme(F.max, F.amax), "min": _extreme(F.min, F.amin)}
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
