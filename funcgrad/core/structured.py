"""Structured gradients for one-pass Jacobians: the identity stays structured until an op needs it dense.

A vectorized Jacobian seeds a batched pass with the rows of the identity (the cotangents of a reverse
pass or the tangents of a forward one). Stored densely, every rule
works on an ``N x N`` (or larger) array: the first product costs a full matrix product where scaling
rows would do, and each elementwise rule allocates and fills another big array. Two NumPy duck arrays
keep the structure instead:

- ``BatchedDiagonal``: entry ``i`` of the stack is ``d.flat[i]`` times the ``i``-th one-hot array of
  ``d``'s shape (the identity seed is ``d = 1``);
- ``ScaledStack``: entry ``b`` is ``rows[b] * base[b] * cols``, a dense ``base`` scaled lazily: what
  a diagonal becomes after a product with a matrix (``base`` is then that matrix, not a copy).

Rules need no change. Elementwise scaling, negation, sums of like structures, reshapes of the entries
and the products with a matrix that a vector operand's matmul rules perform stay structured (or give
the cheap dense result directly); anything else sees the dense array (``__array__``). The structure
only saves work: results equal the dense computation's, except that an entry known to be zero stays
zero where the dense pass would compute ``0 * inf`` or ``0 / 0`` (a Jacobian entry of an output that
does not depend on that input is 0, not NaN).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

__all__ = ["Structured", "BatchedDiagonal", "ScaledStack", "identity_seed", "dense_copy", "copy_to_write"]

_SCALING = (np.multiply, np.true_divide)


class Structured(NDArrayOperatorsMixin):
    """What both structures share: the ndarray face, and the dense fallback for everything not structured."""

    __slots__ = ()

    shape: tuple[int, ...]

    def dense(self) -> np.ndarray:
        """The stack as an ordinary array."""
        raise NotImplementedError

    @property
    def ndim(self) -> int:
        """Number of dims, the batch dim included."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements of the dense stack."""
        return math.prod(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def dense_transposed(self) -> np.ndarray:
        """``dense().T`` of a stack of vectors (2-D), C-ordered: a forward-mode Jacobian's rows."""
        return np.ascontiguousarray(self.dense().T)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = self.dense()
        return out if dtype is None else out.astype(dtype, copy=False)

    def __getitem__(self, key: Any) -> Any:
        return self.dense()[key]

    def __getattr__(self, name: str) -> Any:
        """Any other ndarray attribute or method, of the dense stack."""
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dense(), name)

    def reshape(self, *shape: Any) -> Any:
        """Reshaping the entries keeps the structure; other reshapes give the dense result."""
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape  # type: ignore[assignment]
        return _reshape(self, tuple(shape))

    def _entries_reshaped(self, core: tuple[int, ...]) -> Any:
        """The same stack with entries of shape ``core`` (same size), or NotImplemented."""
        raise NotImplementedError

    def _scaled(self, ufunc: np.ufunc, factor: Any) -> Any:
        """``ufunc(self, factor)`` for multiply/divide by an entry-shaped ``factor``."""
        raise NotImplementedError

    def _entry_sums(self) -> np.ndarray:
        """The sum of each entry, shape ``(len(self),)``."""
        raise NotImplementedError

    _wraps_others = False  # a subclass that handles every call with other structured operands (a tracer)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if _deferring(inputs):
            return NotImplemented
        if method == "__call__" and not kwargs:
            result = _structured_ufunc(ufunc, inputs)
            if result is not NotImplemented:
                return result
        return getattr(ufunc, method)(*_densified(inputs), **kwargs)

    def __array_function__(self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if any(getattr(t, "_wraps_others", False) for t in types):
            return NotImplemented
        if func is np.shape:
            return self.shape
        if func is np.ndim:
            return self.ndim
        if func is np.reshape:
            shape = args[1] if len(args) > 1 else kwargs["shape"]
            return _reshape(args[0], tuple(shape) if isinstance(shape, tuple | list) else (int(shape),))
        if func is np.sum and len(args) == 1 and args[0] is self and _over_entries(self, kwargs):
            return self._entry_sums()
        return func(*_densified(args), **{k: _densified(v) for k, v in kwargs.items()})


def _outranks(other: Any) -> bool:
    """NumPy's rule for ndarray operators, kept by stacks: an operand of higher ``__array_priority__`` that is
    no array (a Tensor, whose reflected operator records the graph) handles the operator itself."""
    return not isinstance(other, np.ndarray | Structured) and getattr(other, "__array_priority__", 0.0) > 0.0


def _deferring_operator(method: Any) -> Any:
    def operator(self: Structured, other: Any) -> Any:
        return NotImplemented if _outranks(other) else method(self, other)
    operator.__name__ = method.__name__
    return operator


for _name in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow", "lshift", "rshift",
              "and", "xor", "or"):
    setattr(Structured, f"__{_name}__", _deferring_operator(getattr(NDArrayOperatorsMixin, f"__{_name}__")))
    if _name != "divmod":
        setattr(Structured, f"__i{_name}__", _deferring_operator(getattr(NDArrayOperatorsMixin, f"__i{_name}__")))
for _name in ("lt", "le", "eq", "ne", "gt", "ge"):
    setattr(Structured, f"__{_name}__", _deferring_operator(getattr(NDArrayOperatorsMixin, f"__{_name}__")))


class BatchedDiagonal(Structured):
    """The ``(N, *d.shape)`` stack, ``N = d.size``, whose ``i``-th entry is zero but ``d.flat[i]`` at flat index i.

    Args:
        d: the diagonal, shaped like one entry of the stack.
    """

    __slots__ = ("d",)

    def __init__(self, d: np.ndarray) -> None:
        self.d = d

    @property
    def shape(self) -> tuple[int, ...]:  # type: ignore[override]
        """``(d.size, *d.shape)``."""
        return (self.d.size, *self.d.shape)

    @property
    def dtype(self) -> np.dtype:
        """The diagonal's dtype."""
        return self.d.dtype

    def __repr__(self) -> str:
        return f"BatchedDiagonal(shape={self.shape}, d={self.d!r})"

    def dense(self) -> np.ndarray:
        out = np.zeros(self.shape, self.d.dtype)
        out[self._diagonal_index()] = self.d.ravel()
        return out

    def dense_transposed(self) -> np.ndarray:
        """A stack of vectors is a diagonal matrix: its own transpose."""
        return self.dense()

    def _diagonal_index(self) -> tuple[np.ndarray, ...]:
        n = np.arange(self.d.size)
        if self.d.ndim == 1:
            return n, n
        return (n, *np.unravel_index(n, self.d.shape)) if self.d.ndim else (n,)

    def astype(self, dtype: Any, copy: bool = True) -> BatchedDiagonal:
        """The same stack in ``dtype``."""
        return BatchedDiagonal(self.d.astype(dtype, copy=copy))

    def _entries_reshaped(self, core: tuple[int, ...]) -> BatchedDiagonal:
        return BatchedDiagonal(self.d.reshape(core))

    def _scaled(self, ufunc: np.ufunc, factor: Any) -> BatchedDiagonal:
        return BatchedDiagonal(ufunc(self.d, factor))

    def _entry_sums(self) -> np.ndarray:
        return self.d.ravel()


class ScaledStack(Structured):
    """The stack whose entry ``b`` is ``rows[b] * base[b] * cols``.

    Args:
        base: the dense stack (often a matrix the pass multiplied by, or a view of one).
        rows: one factor per entry, shape ``(len(base),)``.
        cols: a factor broadcasting into one entry (a Python scalar or an array).
    """

    __slots__ = ("base", "rows", "cols", "dtype")

    def __init__(self, base: np.ndarray, rows: np.ndarray, cols: Any = 1.0) -> None:
        self.base, self.rows, self.cols = base, rows, cols
        self.dtype = np.result_type(base, rows, cols)

    @property
    def shape(self) -> tuple[int, ...]:  # type: ignore[override]
        """The base's shape."""
        return self.base.shape

    def __repr__(self) -> str:
        return f"ScaledStack(shape={self.shape})"

    def dense(self) -> np.ndarray:
        out = np.multiply(self.rows.reshape((-1,) + (1,) * (self.base.ndim - 1)), self.base, dtype=self.dtype)
        if not (np.isscalar(self.cols) and self.cols == 1):
            np.multiply(out, self.cols, out=out)
        return out

    def dense_transposed(self) -> np.ndarray:
        """``dense().T`` in one pass over ``base`` when ``rows`` are ones (a pass seeded with the identity):
        entry ``[j, b]`` is ``base[b, j] * cols[j]``."""
        cols = np.asarray(self.cols)
        if cols.ndim > 1 or self.base.ndim != 2:
            return super().dense_transposed()
        if cols.ndim:
            cols = cols.reshape(-1, 1)
        if np.all(self.rows == 1):
            return np.multiply(self.base.T, cols, dtype=self.dtype)
        out = np.multiply(self.base.T, self.rows, dtype=self.dtype)
        if not (cols.ndim == 0 and cols == 1):
            np.multiply(out, cols, out=out)
        return out

    def astype(self, dtype: Any, copy: bool = True) -> ScaledStack:
        """The same stack in ``dtype``."""
        return ScaledStack(self.base.astype(dtype, copy=copy), self.rows.astype(dtype, copy=copy),
                           np.asarray(self.cols).astype(dtype, copy=copy))

    def _entries_reshaped(self, core: tuple[int, ...]) -> Any:
        if np.ndim(self.cols) and np.shape(self.cols) != self.shape[1:]:
            return NotImplemented  # a broadcast factor does not follow a reshape
        cols = np.reshape(self.cols, core) if np.ndim(self.cols) else self.cols
        return ScaledStack(self.base.reshape((len(self.base), *core)), self.rows, cols)

    def _scaled(self, ufunc: np.ufunc, factor: Any) -> ScaledStack:
        return ScaledStack(self.base, self.rows, ufunc(self.cols, factor))

    def _entry_sums(self) -> np.ndarray:
        flat = self.base.reshape(len(self.base), -1)
        if np.ndim(self.cols) == 0:
            return self.rows * (flat.sum(axis=1) * self.cols)
        cols = self.cols
        if type(cols) is not np.ndarray or cols.shape != self.shape[1:] or not cols.flags.c_contiguous:
            cols = np.ascontiguousarray(np.broadcast_to(cols, self.shape[1:]))  # BLAS needs strides
        return self.rows * (flat @ cols.reshape(-1))  # one matrix-vector product

    def _like(self, other: Any) -> bool:
        """True if ``other`` scales the same base by the same rows (so sums combine the column factors)."""
        return (isinstance(other, ScaledStack) and other.base is self.base
                and (other.rows is self.rows or np.array_equal(other.rows, self.rows)))


def _deferring(inputs: tuple[Any, ...]) -> bool:
    """True if an operand wraps the others (``stack`` then leaves the call to it)."""
    return any(type(x)._wraps_others for x in inputs if isinstance(x, Structured))


def _densified(value: Any) -> Any:
    """``value`` with every structured stack in it (also inside lists and tuples) made dense."""
    if isinstance(value, Structured):
        return value.dense()
    if isinstance(value, list | tuple):
        return type(value)(_densified(v) for v in value)
    return value


def dense_copy(value: Any) -> Any:
    """A new dense array with ``value``'s values (a structured stack made dense; a traced array stays traced)."""
    return value.dense() if isinstance(value, Structured) else np.array(value, copy=True)


def copy_to_write(x: Any, source: Any) -> Any:
    """A new array with ``x``'s values, about to receive ``source``'s: a traced one when ``source`` is traced,
    so the recording sees the writes (``funcgrad.func.compiler.tracing``), else ``dense_copy(x)``."""
    if isinstance(source, Structured) and source._wraps_others and not isinstance(x, Structured):
        out = np.empty_like(source, shape=np.shape(x), dtype=np.result_type(x))
        out[...] = x
        return out
    return dense_copy(x)


def identity_seed(shape: tuple[int, ...], dtype: Any) -> BatchedDiagonal:
    """The rows of the identity of size ``prod(shape)``, each shaped ``shape``: a Jacobian pass's seed."""
    return BatchedDiagonal(np.ones(shape, dtype))


def _reshape(a: Structured, shape: tuple[int, ...]) -> Any:
    n, size = a.shape[0], math.prod(a.shape[1:])
    if shape and shape[0] in (n, -1) and -1 not in shape[1:] and math.prod(shape[1:]) == size:
        result = a._entries_reshaped(shape[1:])
        if result is not NotImplemented:
            return result
    return np.reshape(a.dense(), shape)


def _over_entries(a: Structured, kwargs: dict[str, Any]) -> bool:
    """True if ``np.sum(a, **kwargs)`` sums each entry whole (every dim but the first, no keepdims)."""
    if kwargs.get("keepdims") or set(kwargs) - {"axis", "keepdims"}:
        return False
    axis = kwargs.get("axis")
    axes = (axis,) if isinstance(axis, int) else tuple(axis) if axis is not None else ()
    return sorted(d % a.ndim for d in axes) == list(range(1, a.ndim)) and a.ndim > 1


def _fits(value: Any, stack: Structured) -> bool:
    """True if ``value`` (not a stack) broadcasts into one entry of the stack without enlarging it."""
    kind = type(value)
    if kind is float or kind is int:  # (the common cases, a number and an entry-shaped array, first)
        return True
    shape, core = value.shape if kind is np.ndarray else np.shape(value), stack.shape[1:]
    if shape == core or not shape:
        return True
    return len(shape) <= len(core) and all(a in (1, b) for a, b in zip(reversed(shape), reversed(core)))


def _structured_ufunc(ufunc: np.ufunc, inputs: tuple[Any, ...]) -> Any:
    """The result of ``ufunc(*inputs)`` kept structured, or the cheap dense one; NotImplemented otherwise."""
    if ufunc is np.negative:
        return inputs[0]._scaled(np.multiply, -1)
    if ufunc is np.positive:
        return inputs[0]
    if len(inputs) != 2:
        return NotImplemented
    a, b = inputs
    a_structured, b_structured = isinstance(a, Structured), isinstance(b, Structured)
    if ufunc in _SCALING:
        if a_structured and not b_structured and _fits(b, a):
            return a._scaled(ufunc, b)
        if b_structured and not a_structured and ufunc is np.multiply and _fits(a, b):
            return b._scaled(ufunc, a)
        if isinstance(a, BatchedDiagonal) and isinstance(b, BatchedDiagonal) and ufunc is np.multiply:
            return BatchedDiagonal(a.d * b.d) if a.shape == b.shape else NotImplemented
        return NotImplemented
    if ufunc is np.add or ufunc is np.subtract:
        if isinstance(a, BatchedDiagonal) and isinstance(b, BatchedDiagonal) and a.shape == b.shape:
            return BatchedDiagonal(ufunc(a.d, b.d))
        if isinstance(a, ScaledStack) and a._like(b):
            return ScaledStack(a.base, a.rows, ufunc(a.cols, b.cols))
        if isinstance(a, BatchedDiagonal) != isinstance(b, BatchedDiagonal) and not (a_structured and b_structured):
            return _plus_diagonal(ufunc, a, b)
        return NotImplemented
    if ufunc is np.matmul:
        return _matmul(a, b)
    return NotImplemented


def _plus_diagonal(ufunc: np.ufunc, a: Any, b: Any) -> Any:
    """A dense stack plus (or minus) a diagonal one: a copy of the dense one with the diagonal added."""
    a_diag = isinstance(a, BatchedDiagonal)
    diag, dense = (a, b) if a_diag else (b, a)
    if not isinstance(dense, np.ndarray) or dense.shape != diag.shape:
        return NotImplemented
    dtype = np.result_type(dense, diag.d)
    subtract = ufunc is np.subtract
    out = np.negative(dense, dtype=dtype) if subtract and a_diag else dense.astype(dtype, copy=True)
    out[diag._diagonal_index()] += -diag.d.ravel() if subtract and not a_diag else diag.d.ravel()
    return out


def _matmul(a: Any, b: Any) -> Any:
    """The products with a matrix that matmul's rules perform for a vector operand (the vector as it is, or
    promoted to a row or a column): scaled rows or columns of the matrix, or one product with a scaled
    matrix, never a product with the dense stack."""
    if isinstance(a, BatchedDiagonal) and isinstance(b, np.ndarray) and b.ndim == 1 and a.d.ndim == 1:
        return a.d * b  # entry i is d_i e_i: entry · v = d_i v_i
    if isinstance(a, BatchedDiagonal) and isinstance(b, np.ndarray) and b.ndim == 2:
        if a.d.ndim == 1:  # entry i is d_i e_i: entry @ M = d_i M[i, :]
            return ScaledStack(b, a.d)
        if a.d.ndim == 2 and a.d.shape[0] == 1:  # a row
            return ScaledStack(b[:, None, :], a.d.ravel())
        if a.d.ndim == 2 and a.d.shape[1] == 1 and b.shape == (1, 1):
            return BatchedDiagonal(a.d * b[0, 0])
    if isinstance(b, BatchedDiagonal) and isinstance(a, np.ndarray) and a.ndim == 2 and b.d.ndim == 2:
        if b.d.shape[1] == 1:  # entry i is d_i e_i (a column): M @ entry = d_i M[:, i]
            return ScaledStack(a.T[:, :, None], b.d.ravel())
        if b.d.shape[0] == 1 and a.shape == (1, 1):  # a scalar times a row
            return BatchedDiagonal(b.d * a[0, 0])
    if isinstance(a, ScaledStack) and isinstance(b, np.ndarray) and b.ndim == 2 and a.base.ndim == 2:
        # (rows ⊙ base ⊙ cols) @ M = rows ⊙ (base @ (cols ⊙ M)): the factors go to the smaller operand
        scaled_m = b if np.isscalar(a.cols) and a.cols == 1 else np.reshape(a.cols, (-1, 1)) * b
        out = a.base @ scaled_m
        if not (a.rows == 1).all():  # (ones, for a pass seeded with the identity: nothing to scale)
            rows = a.rows[:, None]
            out = np.multiply(out, rows, out=out) if out.dtype == np.result_type(out, rows) else out * rows
        return out
    return NotImplemented
