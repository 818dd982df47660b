"""PyTorch functions written with the table's ops (``lerp``, ``addcmul``, ``logit``, ``diff``, ``kron``, ...): each
is a composition whose derivative the table gives, right at every order. Each is also a Tensor method (first
parameter ``x``), and its in-place form (``lerp_``, ...) is installed by ``funcgrad.ops.install``.

Values, result dtypes and error texts are torch's; the helpers return NumPy results when given arrays, as the
table's functions do. Ops with a derivative of their own (``xlogy``, ``fmod``, ``frac``, ``logcumsumexp``) are
table entries in ``ops/derivatives``, not here.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.core.tensor import Tensor
from funcgrad.ops.kernels import torch_dtype_name
from funcgrad.ops.registry import composite

__all__ = ["lerp", "addcmul", "addcdiv", "logit", "nan_to_num", "deg2rad", "rad2deg", "true_divide", "float_power",
           "diff", "inner", "cross", "kron", "dist", "std_mean", "var_mean", "nansum", "nanmean", "count_nonzero",
           "isclose", "allclose", "equal", "repeat_interleave", "fliplr", "flipud", "rot90", "moveaxis", "swapdims",
           "swapaxes", "index_add", "index_fill", "all", "any", "tensor_split", "take", "diag_embed", "diagflat",
           "unique", "heaviside"]


def _data(a: Any) -> Any:
    return a.data if isinstance(a, Tensor) else a


def _dtype(a: Any) -> np.dtype:
    return np.result_type(_data(a))


def _ndim(a: Any) -> int:
    return int(np.ndim(_data(a)))


def _as(a: Any, dtype: np.dtype) -> Any:
    """``a`` converted to ``dtype`` (itself when it has it), differentiably."""
    if isinstance(a, Tensor | np.ndarray):
        return a if a.dtype == dtype else F.to_copy(a, dtype)
    return dtype.type(a)


# ----- pointwise ------------------------------------------------------------------------------------------
@composite
def lerp(x: Any, end: Any, weight: Any) -> Any:
    """Linear interpolation ``x + weight * (end - x)`` (``weight`` a number or a tensor), as torch.lerp.

    Example:
        >>> import funcgrad as fg
        >>> fg.lerp(fg.tensor([0.0, 2.0]), fg.tensor([4.0, 4.0]), 0.25)
        tensor([1. , 2.5])
    """
    return F.add(x, F.mul(weight, F.sub(end, x)))


@composite
def addcmul(x: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    """``x + value * tensor1 * tensor2``, as torch.addcmul."""
    product = F.mul(tensor1, tensor2)
    return F.add(x, product if value == 1 else F.mul(product, value))


@composite
def addcdiv(x: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    """``x + value * tensor1 / tensor2``, as torch.addcdiv (integer ``tensor1`` and ``tensor2`` raise, as torch)."""
    if _dtype(tensor1).kind in "iub" and _dtype(tensor2).kind in "iub":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
                           "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                           "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                           "for all dtypes.")
    quotient = F.div(tensor1, tensor2)
    return F.add(x, quotient if value == 1 else F.mul(quotient, value))


@composite
def logit(x: Any, eps: float | None = None) -> Any:
    """``log(x / (1 - x))``; with ``eps``, x is first clamped to ``[eps, 1 - eps]`` (so the gradient is 0 outside),
    as torch.logit."""
    if eps is not None:
        x = F.clamp(x, eps, 1 - eps)
    return F.sub(F.log(x), F.log1p(F.neg(x)))


@composite
def nan_to_num(x: Any, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Any:
    """NaN, inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the dtype's largest and
    lowest finite values); no gradient reaches the replaced entries. Integer and bool inputs are copied."""
    dtype = _dtype(x)
    if dtype.kind == "c":
        parts = [nan_to_num(part, nan, posinf, neginf) for part in (F.real(x), F.imag(x))]
        return F.add(parts[0], F.mul(parts[1], 1j))
    if dtype.kind != "f":
        return F.clone(x)
    info = np.finfo(dtype)
    big = dtype.type(info.max if posinf is None else posinf)
    small = dtype.type(info.min if neginf is None else neginf)
    return F.where(F.isnan(x), dtype.type(nan), F.where(F.isinf(x), F.where(F.gt(x, 0), big, small), x))


@composite
def deg2rad(x: Any) -> Any:
    """Degrees to radians: ``x * pi / 180``."""
    return F.mul(x, math.pi / 180.0)


@composite
def rad2deg(x: Any) -> Any:
    """Radians to degrees: ``x * 180 / pi``."""
    return F.mul(x, 180.0 / math.pi)


@composite
def true_divide(x: Any, y: Any) -> Any:
    """``x / y`` (an alias of ``div``, as torch.true_divide)."""
    return F.div(x, y)


@composite
def float_power(x: Any, exponent: Any) -> Any:
    """``x ** exponent`` computed in double precision (complex128 if either is complex), as torch.float_power."""
    complex_ = _dtype(x).kind == "c" or _dtype(exponent).kind == "c"
    dtype = np.dtype(np.complex128 if complex_ else np.float64)
    return F.pow(_as(x, dtype), _as(exponent, dtype))


# ----- differences and products -------------------------------------------------------------------------------
@composite
def diff(x: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first); for bools, whether
    neighbours differ. As torch.diff."""
    if _ndim(x) == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = dim % _ndim(x)
    pieces = [p for p in (prepend, x, append) if p is not None]
    if len(pieces) > 1:
        x = F.cat([p if _ndim(p) else F.expand(p, tuple(1 if i == d else s for i, s in enumerate(np.shape(_data(x)))))
                   for p in pieces], d)
    step = F.logical_xor if _dtype(x) == np.bool_ else F.sub
    lead = (slice(None),) * d
    for _ in range(n):
        x = step(F.getitem(x, lead + (slice(1, None),)), F.getitem(x, lead + (slice(None, -1),)))
    return x


@composite
def inner(x: Any, other: Any) -> Any:
    """The sum of products over the last dims of ``x`` and ``other`` (a product with a 0-d input), as torch.inner."""
    if _ndim(x) == 0 or _ndim(other) == 0:
        return F.mul(x, other)
    if np.shape(_data(x))[-1] != np.shape(_data(other))[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(np.shape(_data(x)))} and {list(np.shape(_data(other)))}")
    return F.tensordot(x, other, ([-1], [-1]))


@composite
def cross(x: Any, other: Any, dim: int | None = None) -> Any:
    """The cross product of 3-vectors along ``dim`` (broadcasting the others; by default the first dim of size 3),
    as torch.cross."""
    shape = np.broadcast_shapes(np.shape(_data(x)), np.shape(_data(other)))
    if dim is None:
        threes = [i for i, s in enumerate(shape) if s == 3]
        if not threes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = threes[0]
    if shape[dim] != 3 or np.shape(_data(x))[dim] != 3 or np.shape(_data(other))[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{np.shape(_data(x))[dim]} and {np.shape(_data(other))[dim]}")
    x, other = F.broadcast_to(x, shape), F.broadcast_to(other, shape)
    # (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0): rolled copies of the components
    return F.sub(F.mul(F.roll(x, -1, dim), F.roll(other, -2, dim)), F.mul(F.roll(x, -2, dim), F.roll(other, -1, dim)))


@composite
def kron(x: Any, other: Any) -> Any:
    """The Kronecker product: blocks ``x[i, j] * other``, as torch.kron (the lower-dim input gets leading 1s)."""
    n = max(_ndim(x), _ndim(other))
    a_shape = (1,) * (n - _ndim(x)) + np.shape(_data(x))
    b_shape = (1,) * (n - _ndim(other)) + np.shape(_data(other))
    # interleave the dims: a as (a0, 1, a1, 1, ...), b as (1, b0, 1, b1, ...), then merge each pair
    a = F.reshape(x, tuple(s for d in a_shape for s in (d, 1)))
    b = F.reshape(other, tuple(s for d in b_shape for s in (1, d)))
    return F.reshape(F.mul(a, b), tuple(p * q for p, q in zip(a_shape, b_shape)))


@composite
def dist(x: Any, other: Any, p: float = 2) -> Any:
    """The ``p``-norm of ``x - other`` (broadcast), as torch.dist."""
    return F.linalg_vector_norm(F.sub(x, other), p)


# ----- reductions -----------------------------------------------------------------------------------------------
@composite
def std_mean(x: Any, dim: Any = None, *, correction: float = 1, keepdim: bool = False) -> tuple[Any, Any]:
    """``(std(x, dim), mean(x, dim))`` as a tuple, as torch.std_mean."""
    return F.std(x, dim, correction=correction, keepdim=keepdim), F.mean(x, dim, keepdim)


@composite
def var_mean(x: Any, dim: Any = None, *, correction: float = 1, keepdim: bool = False) -> tuple[Any, Any]:
    """``(var(x, dim), mean(x, dim))`` as a tuple, as torch.var_mean."""
    return F.var(x, dim, correction=correction, keepdim=keepdim), F.mean(x, dim, keepdim)


@composite
def nansum(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """The sum over ``dim`` counting NaNs as 0 (they get no gradient), as torch.nansum."""
    if _dtype(x).kind not in "fc":
        return F.sum(x, dim, keepdim)
    return F.sum(F.where(F.isnan(x), 0.0, x), dim, keepdim)


@composite
def nanmean(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """The mean over ``dim`` of the non-NaN values (NaN where all are NaN), as torch.nanmean."""
    if _dtype(x).kind not in "fc":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{torch_dtype_name(_dtype(x))}")
    count = F.sum(F.logical_not(F.isnan(x)), dim, keepdim)
    return F.div(nansum(x, dim, keepdim), count)


@composite
def all(x: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001
    """Whether every element over ``dim`` (all dims when None) is nonzero, a bool tensor, as torch.all."""
    return _no_grad_like(x, np.all(_data(x), axis=_axes(x, dim), keepdims=keepdim))


@composite
def any(x: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001
    """Whether some element over ``dim`` (all dims when None) is nonzero, a bool tensor, as torch.any."""
    return _no_grad_like(x, np.any(_data(x), axis=_axes(x, dim), keepdims=keepdim))


def _axes(x: Any, dim: Any) -> Any:
    """``dim`` for NumPy: None, or dims of a 0-d input (0 and -1, as torch) dropped."""
    if dim is None or _ndim(x):
        return dim
    return ()


def _no_grad_like(x: Any, array: Any) -> Any:
    """``array`` as a Tensor when ``x`` is one (a result without gradient)."""
    return Tensor(np.asarray(array)) if isinstance(x, Tensor) else array


@composite
def count_nonzero(x: Any, dim: Any = None) -> Any:
    """The number of nonzero elements over ``dim`` (all dims when None), an int64 tensor; no gradient."""
    return F.sum(F.ne(x, 0), dim)


# ----- comparisons of whole tensors ---------------------------------------------------------------------------
@composite
def isclose(x: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    """Elementwise ``|x - other| <= atol + rtol * |other|`` (equal infinities close; NaN only with ``equal_nan``),
    a bool tensor, as torch.isclose."""
    result = np.isclose(_data(x), _data(other), rtol=rtol, atol=atol, equal_nan=equal_nan)
    return Tensor(result) if isinstance(x, Tensor) or isinstance(other, Tensor) else result


@composite
def allclose(x: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether ``isclose`` holds everywhere (a Python bool), as torch.allclose."""
    return bool(np.all(np.isclose(_data(x), _data(other), rtol=rtol, atol=atol, equal_nan=equal_nan)))


@composite
def equal(x: Any, other: Any) -> bool:
    """Whether ``x`` and ``other`` have the same shape and values (a Python bool; NaN != NaN), as torch.equal."""
    a, b = np.asarray(_data(x)), np.asarray(_data(other))
    return a.shape == b.shape and bool(np.all(a == b))


# ----- shapes -------------------------------------------------------------------------------------------------
@composite
def repeat_interleave(x: Any, repeats: Any, dim: int | None = None, *, output_size: int | None = None) -> Any:
    """Each element (each slice along ``dim``; of the flattened input when None) repeated ``repeats`` times
    (an int or one count per element), as torch.repeat_interleave."""
    if dim is None:
        x, dim = F.reshape(x, (-1,)), 0
    counts = np.asarray(_data(repeats))
    if counts.dtype.kind not in "iu":
        raise RuntimeError("repeats has to be Long tensor")
    if np.any(counts < 0):
        raise RuntimeError("repeats can not be negative")
    size = np.shape(_data(x))[dim] if _ndim(x) else 1
    if counts.ndim and counts.shape != (size,):
        raise RuntimeError("repeats must have the same size as input along dim")
    index = np.repeat(np.arange(size), counts)
    if output_size is not None and output_size != index.size:
        raise RuntimeError("allocated size does not match required size")
    return F.index_select(x if _ndim(x) else F.reshape(x, (1,)), dim, index)


@composite
def tensor_split(x: Any, indices_or_sections: Any, dim: int = 0) -> tuple[Any, ...]:
    """``x`` split along ``dim`` into ``indices_or_sections`` nearly equal pieces (the first ones one longer), or at
    the given indices; each piece a view, as torch.tensor_split."""
    n = np.shape(_data(x))[dim]
    split = np.asarray(_data(indices_or_sections))
    if split.ndim == 0:
        sections = int(split)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        size, extra = divmod(n, sections)
        bounds = np.cumsum([0] + [size + (i < extra) for i in range(sections)])
    else:
        bounds = np.concatenate([[0], np.clip(split, 0, n), [n]])
    lead = (slice(None),) * (dim % _ndim(x))
    return tuple(F.getitem(x, lead + (slice(int(a), int(max(a, b))),)) for a, b in zip(bounds[:-1], bounds[1:]))


@composite
def take(x: Any, index: Any) -> Any:
    """The elements of ``x`` read as a flat vector at ``index`` (its shape kept), as torch.take."""
    return F.getitem(F.reshape(x, (-1,)), (np.asarray(_data(index)),))


@composite
def diag_embed(x: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    """Matrices with the last dim of ``x`` on their ``offset`` diagonal (in the output dims ``dim1``, ``dim2``), zeros
    elsewhere, as torch.diag_embed."""
    shape = np.shape(_data(x))
    n = shape[-1] + abs(offset)
    rows = np.arange(shape[-1]) + max(-offset, 0)
    zeros = np.zeros(shape[:-1] + (n, n), dtype=np.result_type(_data(x)))
    out = F.index_put(zeros, (Ellipsis, rows, rows + offset), x, False)
    return out if (dim1, dim2) == (-2, -1) else F.movedim(out, (-2, -1), (dim1, dim2))


@composite
def diagflat(x: Any, offset: int = 0) -> Any:
    """A matrix with the elements of ``x`` (flattened) on its ``offset`` diagonal, as torch.diagflat."""
    return diag_embed(F.reshape(x, (-1,)), offset)


@composite
def unique(x: Any, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: int | None = None) -> Any:
    """The distinct values (sorted), and optionally the index of each element's value and each value's count, as
    torch.unique (no gradient, as torch)."""
    a = np.asarray(_data(x))
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=dim)
    if dim is None:
        inverse = inverse.reshape(a.shape)
    out = [values] + [inverse] * return_inverse + [counts] * return_counts
    out = [_no_grad_like(x, o) for o in out]
    return out[0] if len(out) == 1 else tuple(out)


@composite
def heaviside(x: Any, values: Any) -> Any:
    """0 where ``x`` < 0, 1 where ``x`` > 0 and ``values`` where ``x`` = 0, as torch.heaviside (no gradient)."""
    return _no_grad_like(x, np.heaviside(_data(x), _data(values)).astype(np.result_type(_data(x), _data(values))))


@composite
def fliplr(x: Any) -> Any:
    """The columns (dim 1) reversed; needs at least 2 dims, as torch.fliplr."""
    if _ndim(x) < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return F.flip(x, (1,))


@composite
def flipud(x: Any) -> Any:
    """The rows (dim 0) reversed; needs at least 1 dim, as torch.flipud."""
    if _ndim(x) < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return F.flip(x, (0,))


@composite
def rot90(x: Any, k: int = 1, dims: Any = (0, 1)) -> Any:
    """``x`` rotated by 90 degrees ``k`` times in the plane of ``dims``, from the first dim towards the second,
    as torch.rot90."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    n = _ndim(x)
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = dims
    if d0 % n == d1 % n:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return F.transpose(F.flip(x, (d1,)), d0, d1)
    if k == 2:
        return F.flip(x, (d0, d1))
    if k == 3:
        return F.flip(F.transpose(x, d0, d1), (d1,))
    return F.clone(x)


@composite
def moveaxis(x: Any, source: Any, destination: Any) -> Any:
    """``movedim`` under NumPy's name."""
    return F.movedim(x, source, destination)


@composite
def swapdims(x: Any, dim0: int, dim1: int) -> Any:
    """``transpose`` under another of torch's names."""
    return F.transpose(x, dim0, dim1)


@composite
def swapaxes(x: Any, axis0: int, axis1: int) -> Any:
    """``transpose`` under NumPy's name."""
    return F.transpose(x, axis0, axis1)


# ----- indexed updates (the functional forms of index_add_ and index_fill_) --------------------------------------
def _along(name: str, x: Any, dim: int, index: Any) -> tuple[Any, ...]:
    """The index tuple that picks ``index`` along ``dim``."""
    idx = np.asarray(_data(index))
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if idx.dtype.kind not in "iu":
        raise IndexError(f"{name}(): Expected dtype int32/int64 for index but got: {idx.dtype}")
    return (slice(None),) * (dim % max(_ndim(x), 1)) + (idx,)


@composite
def index_add(x: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Any:
    """A copy of ``x`` with ``alpha * source[..., i, ...]`` added at ``index[i]`` along ``dim`` (repeated indices
    add up), as torch.index_add."""
    return F.index_put(x, _along("index_add_", x, dim, index), source if alpha == 1 else F.mul(source, alpha), True)


@composite
def index_fill(x: Any, dim: int, index: Any, value: Any) -> Any:
    """A copy of ``x`` with the slices at ``index`` along ``dim`` set to ``value`` (a number or a 0-d tensor, which
    then gets their gradient), as torch.index_fill."""
    if isinstance(value, Tensor | np.ndarray) and np.ndim(_data(value)) != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{np.ndim(_data(value))} dimension(s).")
    return F.index_put(x, _along("index_fill_", x, dim, index), value, False)
