"""Derivatives of products and contractions. Names as in elementwise.py.

Every op here is bilinear: the gradient of one operand is the product of ``g`` with the other,
so the rules are themselves products, written with funcgrad ops so they record their own graph.
``g`` may carry leading batch dims: matrix rules address the last two dims only (``@``
broadcasts the rest) and einsum rules give ``g`` a leading ``...``. Kernels check shapes and
raise PyTorch's messages; broadcast batch dims are summed back by the engine, never here.
"""
from __future__ import annotations

import math
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.ops import formulas as R
from funcgrad.ops.registry import allow_complex, defop, tensor_method

__all__ = ["matmul", "mm", "bmm", "dot", "vdot", "outer", "tensordot", "einsum"]

Dims = int | Sequence[Sequence[int]]


# ----- kernels --------------------------------------------------------------------------------
def _one_gemm(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """``x @ y`` as one flattened GEMM when a big matrix meets a long stack (batched passes), else None.

    NumPy loops over the stack with one small product (often matrix-vector) per matrix; one GEMM wins
    from about 32 matrices against a matrix of 64 x 64 or more (measured).
    """
    xs, ys = x.shape, y.shape
    if len(xs) == 2 and len(ys) > 2 and xs[1] == ys[-2] and _big(xs, ys):
        return np.moveaxis(np.tensordot(x, y, axes=(1, -2)), 0, -2)
    if len(ys) == 2 and len(xs) > 2 and xs[-1] == ys[0] and _big(ys, xs):
        return (np.reshape(x, (-1, xs[-1])) @ y).reshape(*xs[:-1], ys[1])
    return None


def _big(matrix: tuple[int, ...], stack: tuple[int, ...]) -> bool:
    return math.prod(stack[:-2]) >= 32 and matrix[0] * matrix[1] >= 4096


def _matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Matrix product with NumPy's broadcasting: a 1-D ``x`` is a row, a 1-D ``y`` a column
    (the added dim is dropped from the result) and leading batch dims broadcast."""
    try:  # (structured operands, such as a Jacobian's diagonal seed, go to np.matmul as they are)
        out = (_one_gemm(x, y) if type(x) is np.ndarray and type(y) is np.ndarray and x.ndim + y.ndim > 4
               else None)  # a matrix and a stack, at least
        return out if out is not None else np.matmul(x, y)
    except ValueError:
        raise RuntimeError(_matmul_error(np.shape(x), np.shape(y))) from None


def _mm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Product of two matrices (2-D only; ``matmul`` broadcasts)."""
    for a, name in ((x, "self"), (y, "mat2")):
        if np.ndim(a) != 2:
            raise RuntimeError(f"{name} must be a matrix")
    return _matmul(x, y)


def _bmm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Batched product of two stacks of matrices, (b, n, m) @ (b, m, p) -> (b, n, p); no broadcasting."""
    for a, name in ((x, "batch1"), (y, "batch2")):
        if np.ndim(a) != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    expected = [x.shape[0], x.shape[2]]
    if list(y.shape[:2]) != expected:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: {expected} "
                           f"but got: {list(y.shape[:2])}.")
    return np.matmul(x, y)


def _dot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Inner product of two 1-D tensors of the same size (no conjugation; see ``vdot``)."""
    _check_vectors(x, y)
    return np.dot(x, y)


def _vdot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Inner product of two 1-D tensors of the same size, conjugating the first: sum(conj(x) * y)."""
    _check_vectors(x, y)
    return np.vdot(x, y)


def _outer(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Outer product of two 1-D tensors: out[i, j] = x[i] * y[j]."""
    for a, name in ((x, "self"), (y, "vec2")):
        if np.ndim(a) != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {np.ndim(a)}-D")
    return np.multiply.outer(x, y)


def _tensordot(x: np.ndarray, y: np.ndarray, dims: Dims = 2) -> np.ndarray:
    """Contract the last ``dims`` dims of ``x`` with the first ``dims`` of ``y``, or, with
    ``dims=(dims_x, dims_y)``, dims ``dims_x`` of ``x`` with dims ``dims_y`` of ``y`` (as torch)."""
    dims_x, dims_y = _tensordot_dims(np.ndim(x), np.ndim(y), dims)
    for dx, dy in zip(dims_x, dims_y):
        if x.shape[dx] != y.shape[dy]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {x.shape[dx]} in "
                               f"dim {dx} and second has size {y.shape[dy]} in dim {dy}")
    return np.tensordot(x, y, (dims_x, dims_y))


def _einsum(equation: str, operands: Sequence[np.ndarray]) -> np.ndarray:
    """Einstein summation over the operands' subscripts (NumPy's rules, ``...`` and implicit output)."""
    if len(operands) > 1:
        return np.einsum(equation, *operands, optimize=True)  # a BLAS path pays off from 2 operands
    operand = operands[0]
    out = np.einsum(equation, operand)
    # NumPy answers a diagonal or a transpose with a view; a result of its own, as the op's is no view: an in-place
    # change of the operand must not reach what a node saved of the result, nor a change of the result the operand
    shared = type(out) is np.ndarray and type(operand) is np.ndarray and np.may_share_memory(out, operand)
    return out.copy() if shared else out


# ----- shape checks -----------------------------------------------------------------------------
def _matmul_error(x_shape: tuple[int, ...], y_shape: tuple[int, ...]) -> str:
    """PyTorch's message for operands ``matmul`` cannot multiply."""
    if not x_shape or not y_shape:
        return (f"both arguments to matmul need to be at least 1D, but they are {len(x_shape)}D "
                f"and {len(y_shape)}D")
    if len(x_shape) == len(y_shape) == 1:
        return _size_mismatch(x_shape[0], y_shape[0])
    rows, cols = (x_shape[-2:] if len(x_shape) > 1 else (1, x_shape[0]),
                  y_shape[-2:] if len(y_shape) > 1 else (y_shape[0], 1))
    if rows[1] != cols[0]:
        return f"mat1 and mat2 shapes cannot be multiplied ({rows[0]}x{rows[1]} and {cols[0]}x{cols[1]})"
    return (f"matmul: the batch dimensions {x_shape[:-2]} and {y_shape[:-2]} cannot be broadcast "
            f"together")


def _size_mismatch(n: int, m: int) -> str:
    return (f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number of "
            f"elements, but got {n} and {m} elements respectively")


def _check_vectors(x: np.ndarray, y: np.ndarray) -> None:
    """dot's and vdot's checks: two 1-D tensors of one size."""
    if np.ndim(x) != 1 or np.ndim(y) != 1:
        raise RuntimeError(f"1D tensors expected, but got {np.ndim(x)}D and {np.ndim(y)}D tensors")
    if x.shape != y.shape:
        raise RuntimeError(_size_mismatch(x.shape[0], y.shape[0]))


def _tensordot_dims(x_ndim: int, y_ndim: int, dims: Dims) -> tuple[list[int], list[int]]:
    """``tensordot``'s ``dims`` as two lists of non-negative dims of equal length."""
    if isinstance(dims, int | np.integer):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(x_ndim, y_ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(x_ndim - dims, x_ndim)), list(range(dims))
    try:
        dims_x, dims_y = ([d] if isinstance(d, int | np.integer) else list(d) for d in dims)
    except (TypeError, ValueError):
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}") from None
    if len(dims_x) != len(dims_y):
        raise RuntimeError("both dimension lists should have same length")
    return [int(d) % x_ndim for d in dims_x], [int(d) % y_ndim for d in dims_y]


# ----- rules ------------------------------------------------------------------------------------
def _unsqueeze(a: Any, dim: int) -> Any:
    """``a`` with a unit dim inserted at ``dim`` (-1 or -2, counted in the result): a view."""
    shape = tuple(np.shape(a))
    at = len(shape) + dim + 1
    return F.reshape(a, shape[:at] + (1,) + shape[at:])


def _squeeze(a: Any, dim: int) -> Any:
    """``a`` without its unit dim ``dim`` (-1 or -2): a view."""
    shape = tuple(np.shape(a))
    at = len(shape) + dim
    return F.reshape(a, shape[:at] + shape[at + 1:])


def _as_matrix_product(g: Any, x_vector: bool, y_vector: bool) -> Any:
    """g of ``x @ y`` shaped as for the promoted product: (*b, m, n) with m = 1 for a 1-D x, n = 1 for a 1-D y."""
    if y_vector:
        g = _unsqueeze(g, -1)
    return _unsqueeze(g, -2) if x_vector else g


def mm_x_grad(g: Any, y: Any) -> Any:
    """d(x @ y)/dx = g @ conj(y)ᵀ for matrices (and stacks of them)."""
    return F.matmul(g, R.mT(F.conj(y)))


def mm_y_grad(g: Any, x: Any) -> Any:
    """d(x @ y)/dy = conj(x)ᵀ @ g for matrices (and stacks of them)."""
    return F.matmul(R.mT(F.conj(x)), g)


def dot_x_grad(g: Any, y: Any) -> Any:
    """d(x · y)/dx = g conj(y), g holding one scalar per batch entry."""
    return (_unsqueeze(g, -1) if np.ndim(g) else g) * F.conj(y)


def dot_y_grad(g: Any, x: Any) -> Any:
    """d(x · y)/dy = g conj(x)."""
    return dot_x_grad(g, x)


def vdot_x_grad(g: Any, y: Any) -> Any:
    """d(conj(x) · y)/dx = conj(g) y (x enters conjugated), g holding one scalar per batch entry."""
    return dot_x_grad(F.conj(g), F.conj(y))


def vdot_y_grad(g: Any, x: Any) -> Any:
    """d(conj(x) · y)/dy = g x."""
    return dot_x_grad(g, F.conj(x))


def matmul_x_grad(g: Any, x_shape: tuple[int, ...], y: Any) -> Any:
    """d(x @ y)/dx = g @ conj(y)ᵀ, a 1-D x promoted to (1, k) and a 1-D y to (k, 1) as matmul does."""
    x_vector, y_vector = len(x_shape) == 1, y.ndim == 1  # (y: an input, an array or a Tensor; .ndim, no np.ndim)
    y = F.conj(y)
    if not (x_vector or y_vector):
        return F.matmul(g, R.mT(y))  # the hot path: one product, no copies
    if x_vector and y_vector:
        return (_unsqueeze(g, -1) if np.ndim(g) else g) * y
    if x_vector and y.ndim == 2:
        return F.matmul(g, R.mT(y))  # a row times a matrix: g (*b, n) @ yᵀ, one product for the whole batch
    gx = F.matmul(_as_matrix_product(g, x_vector, y_vector), _unsqueeze(y, -2) if y_vector else R.mT(y))
    return _squeeze(gx, -2) if x_vector else gx  # (*b, m, k), m = 1 dropped for a 1-D x


def matmul_y_grad(g: Any, x: Any, y_shape: tuple[int, ...]) -> Any:
    """d(x @ y)/dy = conj(x)ᵀ @ g, promoted as in ``matmul_x_grad``."""
    x_vector, y_vector = x.ndim == 1, len(y_shape) == 1
    x = F.conj(x)
    if not (x_vector or y_vector):
        return F.matmul(R.mT(x), g)
    if x_vector and y_vector:
        return (_unsqueeze(g, -1) if np.ndim(g) else g) * x
    if y_vector and x.ndim == 2:
        return F.matmul(g, x)  # a matrix times a column: (xᵀ g)ᵀ = g (*b, m) @ x, one product for the whole batch
    gy = F.matmul(_unsqueeze(x, -1) if x_vector else R.mT(x), _as_matrix_product(g, x_vector, y_vector))
    return _squeeze(gy, -1) if y_vector else gy  # (*b, k, n), n = 1 dropped for a 1-D y


def explicit_subscripts(equation: str, shapes: Sequence[tuple[int, ...]]) -> tuple[list[str], str, list[str]]:
    """An einsum equation with ``...`` spelled out as letters and its output made explicit.

    Returns the operands' subscripts, the output's, and the letters still unused.
    """
    lhs, arrow, out = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    spare = [c for c in string.ascii_letters if c not in lhs + out]  # for dims the equation leaves unnamed
    covered = [len(s) - len(t) + 3 for t, s in zip(terms, shapes) if "..." in t]  # dims under each '...'
    ellipsis = "".join(spare[:max(covered, default=0)])  # aligned from the right, as broadcasting
    spare = spare[len(ellipsis):]
    terms = [t.replace("...", ellipsis[len(ellipsis) - len(s) + len(t) - 3:]) if "..." in t else t
             for t, s in zip(terms, shapes)]
    if arrow:
        return terms, out.replace("...", ellipsis), spare
    once = sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1)  # implicit output, as NumPy and torch
    return terms, ellipsis + "".join(once), spare


def einsum_grads(g: Any, equation: str, operands: Sequence[Any]) -> list[Any]:
    """out[o] = Σ Π_j x_j[s_j], so dout/dx_i[s_i] = Σ g[o] Π_{j≠i} x_j[s_j]: one einsum per operand,
    of g (with its batch dims on a leading '...') and the other operands, producing s_i.

    A letter repeated in s_i (a diagonal, 'ii') gets a fresh letter tied to it by an identity matrix;
    a letter that only s_i names (summed there alone) is spread by a ones vector.
    """
    terms, out, spare = explicit_subscripts(equation, [np.shape(x) for x in operands])
    grads = []
    for i, (term, x) in enumerate(zip(terms, operands)):
        subscripts = ["..." + out] + terms[:i] + terms[i + 1:]
        args = [g, *[F.conj(o) for o in operands[:i] + operands[i + 1:]]]  # type: ignore[operator]
        named = set("".join(subscripts))
        fresh = iter(spare)
        target = ""
        for c, n in zip(term, np.shape(x)):
            if c in target:  # x_i[.., c, .., c', ..] gets g only where c' == c
                target += next(fresh)
                subscripts.append(c + target[-1])
                args.append(np.eye(n, dtype=g.dtype))
                continue
            if c not in named and term.count(c) == 1:
                subscripts.append(c)
                args.append(np.ones(n, dtype=g.dtype))
            target += c
        grads.append(F.einsum(",".join(subscripts) + "->..." + target, *args))
    return grads


def _tensordot_subscripts(x_ndim: int, y_ndim: int, dims: Dims) -> tuple[str, str, str]:
    """tensordot as einsum subscripts (x, y, out): contracted dims share letters, the rest go to out."""
    dims_x, dims_y = _tensordot_dims(x_ndim, y_ndim, dims)
    letters = iter(string.ascii_letters)
    sx = [next(letters) for _ in range(x_ndim)]
    sy = [next(letters) for _ in range(y_ndim)]
    for dx, dy in zip(dims_x, dims_y):
        sy[dy] = sx[dx]
    out = [c for d, c in enumerate(sx) if d not in dims_x] + [c for d, c in enumerate(sy) if d not in dims_y]
    return "".join(sx), "".join(sy), "".join(out)


def tensordot_grad(g: Any, other: Any, ndims: tuple[int, int], dims: Dims, wrt_x: bool) -> Any:
    """out[a, b] = Σ_c x[a, c] y[c, b], so dx[a, c] = Σ_b g[a, b] y[c, b] and dy[c, b] = Σ_a g[a, b] x[a, c],
    each in its operand's own dim order."""
    sx, sy, out = _tensordot_subscripts(*ndims, dims)
    wrt, by = (sx, sy) if wrt_x else (sy, sx)
    return F.einsum(f"...{out},{by}->...{wrt}", g, F.conj(other))


# ----- forward-mode rules: d(x * y) = dx * y + x * dy, a batch of tangents kept in front -------------
def _plus(a: Any, b: Any) -> Any:
    """The sum of two JVP terms, either of which may be missing (None) when its input has no tangent."""
    return a if b is None else b if a is None else a + b


def matmul_jvp(x: Any, y: Any, out: Any, x_t: Any = None, y_t: Any = None) -> Any:
    """d(x @ y) = dx @ y + x @ dy, a term per input with a tangent (a tangent may have a leading batch dim).

    Vectors and matrices take one product per term, the batch riding along as matmul broadcasts; with
    stacks, the operands are promoted as matmul does (a 1-D x to a row, a 1-D y to a column) and given
    the product's number of dims, so a tangent's batch dims stay in front."""
    if np.ndim(x) <= 2 and np.ndim(y) <= 2:
        dy = None
        if y_t is not None:
            dy = F.matmul(x, y_t) if np.ndim(y) == 2 else F.matmul(y_t, x if np.ndim(x) == 1 else R.mT(x))
        return _plus(None if x_t is None else F.matmul(x_t, y), dy)
    x_shape = (1,) * (np.ndim(x) == 1) + tuple(np.shape(x))
    y_shape = tuple(np.shape(y)) + (1,) * (np.ndim(y) == 1)
    n = max(len(x_shape), len(y_shape))

    def promoted(a: Any, primal: Any, shape: tuple[int, ...]) -> Any:
        return F.reshape(a, R.batch_shape(a, primal) + (1,) * (n - len(shape)) + shape)

    X, Y = promoted(x, x, x_shape), promoted(y, y, y_shape)
    d = _plus(None if x_t is None else F.matmul(promoted(x_t, x, x_shape), Y),
              None if y_t is None else F.matmul(X, promoted(y_t, y, y_shape)))
    return F.reshape(d, tuple(d.shape[: d.ndim - n]) + out.shape)  # the promoted unit dims dropped


def dot_jvp(x: Any, y: Any, x_t: Any = None, y_t: Any = None) -> Any:
    """d(x · y) = dx · y + x · dy (real: vdot too), a term per input with a tangent."""
    return _plus(None if x_t is None else F.matmul(x_t, y), None if y_t is None else F.matmul(y_t, x))


def vdot_jvp(x: Any, y: Any, x_t: Any = None, y_t: Any = None) -> Any:
    """d(conj(x) · y) = conj(dx) · y + conj(x) · dy, a term per input with a tangent."""
    return _plus(None if x_t is None else F.matmul(F.conj(x_t), y), None if y_t is None else F.matmul(y_t, F.conj(x)))


def outer_jvp(x: Any, y: Any, x_t: Any = None, y_t: Any = None) -> Any:
    """d(x yᵀ) = dx yᵀ + x dyᵀ, a term per input with a tangent."""
    return _plus(None if x_t is None else _unsqueeze(x_t, -1) * y,
                 None if y_t is None else _unsqueeze(x, -1) * _unsqueeze(y_t, -2))


def tensordot_jvp(x_t: Any, y_t: Any, x: Any, y: Any, dims: Dims) -> Any:
    """d tensordot(x, y) = tensordot(dx, y) + tensordot(x, dy), as einsums with the batch on '...'."""
    sx, sy, out = _tensordot_subscripts(np.ndim(x), np.ndim(y), dims)
    return F.einsum(f"...{sx},{sy}->...{out}", x_t, y) + F.einsum(f"{sx},...{sy}->...{out}", x, y_t)


def einsum_jvp(operands_t: Sequence[Any], equation: str, operands: Sequence[Any]) -> Any:
    """d einsum(x_1, ..., x_n) = sum_i einsum(x_1, .., dx_i, .., x_n), each tangent's batch on a leading '...'."""
    terms, out, _ = explicit_subscripts(equation, [np.shape(x) for x in operands])
    total = None
    for i, t in enumerate(operands_t):
        subscripts = terms[:i] + ["..." + terms[i]] + terms[i + 1:]
        term = F.einsum(",".join(subscripts) + "->..." + out, *operands[:i], t, *operands[i + 1:])
        total = term if total is None else total + term
    return total


# ----- products ---------------------------------------------------------------------------------
matmul    = defop("matmul",    _matmul,    x=matmul_x_grad,                   y=matmul_y_grad, jvp=matmul_jvp)
mm        = defop("mm",        _mm,        x=mm_x_grad,                       y=mm_y_grad,     jvp=matmul_jvp)
bmm       = defop("bmm",       _bmm,       x=mm_x_grad,                       y=mm_y_grad,     jvp=matmul_jvp)
dot       = defop("dot",       _dot,       x=dot_x_grad,                      y=dot_y_grad,    jvp=dot_jvp)
vdot      = defop("vdot",      _vdot,      x=vdot_x_grad,                     y=vdot_y_grad,   jvp=vdot_jvp)
outer     = defop("outer",     _outer,     x=lambda g, y: F.matmul(g, F.conj(y)), y=lambda g, x: F.matmul(F.conj(x), g),
                  jvp=outer_jvp)
tensordot = defop("tensordot", _tensordot,
                  x=lambda g, y, x_shape, dims: tensordot_grad(g, y, (len(x_shape), np.ndim(y)), dims, True),
                  y=lambda g, x, y_shape, dims: tensordot_grad(g, x, (np.ndim(x), len(y_shape)), dims, False),
                  jvp=tensordot_jvp)
_einsum_op = defop("einsum", _einsum, sequence="operands", operands=einsum_grads, jvp=einsum_jvp)


def einsum(equation: str, *operands: Any) -> Any:
    """Einstein summation, as ``torch.einsum``.

    Args:
        equation: subscripts per operand, comma-separated, with an optional ``->output``; ``...``
            stands for broadcast dims. Without ``->`` the output is ``...`` and then the letters
            that appear once, in alphabetical order.
        *operands: the tensors (or one list of them).

    Returns:
        The contraction, e.g. ``einsum("ij,jk->ik", a, b)`` is ``a @ b``; ``einsum("ii", a)`` the trace.

    Example:
        >>> import funcgrad as fg
        >>> a = fg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> fg.einsum("ii", a)
        tensor(5., grad_fn=<EinsumBackward0>)
    """
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    return _einsum_op(equation, operands)


tensor_method("__matmul__")(matmul)  # self @ other: the op itself, no extra frame


@tensor_method("__rmatmul__")
def _rmatmul_method(self: Any, other: Any) -> Any:
    """other @ self."""
    return matmul(other, self)

# ----- complex inputs: the rules above conjugate the other operand (g @ conj(y)ᵀ), as torch ---------
allow_complex(matmul, mm, bmm, dot, vdot, outer, tensordot, _einsum_op)
