"""Named helpers for derivative rules longer than one line, each with its math in the docstring.

Every helper is written with funcgrad ops (``F.*``) and operators, so it works on arrays (the
fast backward path) and on Tensors (``create_graph=True``, which records it for higher derivatives).
The hottest ones call the op's kernel directly for a plain-array gradient, where an op call would only
add its dispatch (``mT``, ``unreduce``, ``unindex``).
Gradients ``g`` may carry extra leading batch dimensions; helpers index dims from the end.
"""
from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.structured import Structured
from funcgrad.core.tensor import Tensor
from funcgrad.core.views import mark_view
from funcgrad.ops import kernels as K


def is_complex(value: Any) -> bool:
    """True for complex arrays, Tensors and numbers."""
    return isinstance(value, complex) or getattr(getattr(value, "dtype", None), "kind", "") == "c"


class Scaled:
    """The rule ``g * conj(derivative(saved...))`` of an elementwise op whose local derivative is a function of
    what its node saved (sin's ``cos(x)``): ``sin = defop("sin", np.sin, x=R.Scaled(lambda x: F.cos(x)))``.

    Called, it is an ordinary rule. Its node (``nodes.py``) also keeps the derivative it computed in a
    ``create_graph`` pass and multiplies by it again in later ones: nested derivatives then record
    ``cos(x)`` once per node instead of once per node and order (a graph smaller than torch's, and fewer
    kernels: sin and cos are NumPy's slowest elementwise functions).
    """

    def __init__(self, derivative: Callable[..., Any]) -> None:
        self.derivative = derivative
        g = inspect.Parameter("g", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        # the rule's signature names what it reads, as a lambda's would (the registry reads it)
        self.__signature__ = inspect.Signature([g, *inspect.signature(derivative).parameters.values()])

    def __call__(self, g: Any, *saved: Any) -> Any:
        return self.scale(g, self.derivative(*saved))

    @staticmethod
    def scale(g: Any, derivative: Any) -> Any:
        """``g`` times the conjugate of the local derivative (PyTorch's convention for complex values)."""
        return times_conj(g, derivative)


def times_conj(g: Any, y: Any) -> Any:
    """``g * conj(y)``, the chain rule through a product ``x * y``. When ``y`` is a Tensor constant holding a single
    1 (0-d, or broadcast from one: the implicit seed of a ``grad`` call as a sum's rule spreads it), ``g`` itself:
    the products a ``create_graph`` pass records with its seed then cost the next pass no multiplication, as an
    add's rule passes ``g`` on. (A constant only: a ``y`` requiring grad would lose its own derivative.)"""
    if y.__class__ is Tensor:
        data = y.data
        if not y._requires_grad and g.__class__ is Tensor and not DISPATCH.active and _is_unit(data, g.data):
            return g
        if type(data) is np.ndarray and data.dtype.kind != "c":
            return g * y  # (conj of a real Tensor is itself: F.conj's call saved)
    return g * F.conj(y)


def _is_unit(value: Any, like: Any) -> bool:
    """Whether ``value`` (an array) is a single 1 repeated, of ``like``'s dtype and a shape that broadcasts to no
    larger than ``like``'s: multiplying ``like`` by it changes nothing."""
    return (type(value) is np.ndarray and not any(value.strides) and type(like) is np.ndarray
            and value.dtype == like.dtype and (not value.ndim or value.shape == like.shape) and value.size > 0
            and value.item(0) == 1)


def pow_base_grad(g: Any, x: Any, y: Any) -> Any:
    """d(x**y)/dx = y * x**(y-1), conjugated; 0 where y == 0 and x == 0 (so 0**0 has gradient 0, as torch).
    Only there: torch masks every y == 0, which cuts the derivative in y of y * x**(y-1) (1 at y == 0), so its
    third derivative of x**x at x = 1 is 2 where it is 3."""
    if isinstance(y, int | float) and not isinstance(y, bool):
        if y == 2:
            return g * F.conj(2 * x)  # saves the pass that x ** 1 would cost
        return g * F.conj(y * F.pow(x, y - 1)) if y != 0 else g * 0 * x
    return F.where(F.logical_and(F.eq(y, 0), F.eq(x, 0)), 0.0, g * F.conj(y * F.pow(x, y - 1)))


def pow_exponent_grad(g: Any, x: Any, y: Any, out: Any) -> Any:
    """d(x**y)/dy = x**y * log(x), conjugated; taken as 0 where x == 0 and real(y) >= 0 (as torch)."""
    mask = F.logical_and(F.eq(x, 0), F.ge(F.real(y) if is_complex(y) else y, 0))
    return F.where(mask, 0.0, g * F.conj(out * F.log(F.where(mask, 1.0, x))))


def sgn_grad(g: Any, x: Any, out: Any) -> Any:
    """d sgn(z) for sgn(z) = z / |z|: (g - sgn Re(g conj(sgn))) / |z| for complex z (0 at 0, as torch);
    0 for real x. The map is self-adjoint, so this is its JVP (with the tangent as g) too."""
    if not is_complex(x):
        return zeros(g)
    size = F.abs(x)
    zero = F.eq(size, 0)
    return F.where(zero, 0.0, (g - out * F.real(g * F.conj(out))) / F.where(zero, 1.0, size))


def angle_grad(g: Any, x: Any) -> Any:
    """d angle(z) = g i z / |z|^2 for complex z (0 at 0, as torch); 0 for real x (steps at 0)."""
    if not is_complex(x):
        return zeros(g)
    size2 = F.real(x * F.conj(x))
    zero = F.eq(size2, 0)
    return F.where(zero, 0.0, g * 1j * x / F.where(zero, 1.0, size2))


def backward_jvp(backward: Any, second: Any, grad_output_t: Any, output_t: Any, grad_output: Any, output: Any,
                 out: Any) -> Any:
    """JVP of ``backward(g, y) = g conj(f'(y))`` (tanh_backward, sigmoid_backward), ``second`` = f''(y):
    conj(f'(y)) dg + g conj(f''(y) dy); dy's batch dim is kept in front of g's own batch dims."""
    return backward(grad_output_t, output) + grad_output * F.conj(second * align(output_t, output, np.ndim(out)))


def polar_jvp(abs_t: Any, angle_t: Any, abs: Any, angle: Any, out: Any) -> Any:
    """d (r e^{i theta}) = e^{i theta} dr + i out dtheta; each tangent's batch dim is kept in front of the other
    operand's own batch dims (``polar(dr, angle)`` with dr a tangent of an inner JVP meets dtheta's batch)."""
    return F.polar(align(abs_t, abs, np.ndim(out)), angle) + out * 1j * align(angle_t, angle, np.ndim(out))


def select_grad(g: Any, chosen: Any) -> Any:
    """Gradient through a selection: g where ``chosen`` is true, 0 elsewhere."""
    return F.where(chosen, g, 0.0)


def tie_split(g: Any, x: Any, y: Any, x_loses: Any) -> Any:
    """Gradient of maximum/minimum w.r.t. x: 0 where x loses, g/2 on ties, g elsewhere, so both get g where a NaN
    makes the comparison false (as torch)."""
    return F.where(F.eq(x, y), g / 2, F.where(x_loses, 0.0, g))


def atan2_grad(g: Any, numerator: Any, x: Any, y: Any) -> Any:
    """A partial of atan2(x, y): g * numerator / (x^2 + y^2) (numerator y for x, -x for y); 0 at (0, 0), as torch."""
    denominator = x * x + y * y
    zero = F.eq(denominator, 0)
    return F.where(zero, 0.0, g * numerator / F.where(zero, 1.0, denominator))


def takes_first(x: Any, y: Any, wins: Any) -> Any:
    """Where fmax/fmin (NaN-ignoring) take x: x wins or ties (``wins`` is ge or le), or y is NaN."""
    return F.logical_or(wins(x, y), F.isnan(y))


def clamp_grad(g: Any, x: Any, min: Any, max: Any) -> Any:  # noqa: A002
    """d clamp(x)/dx = 1 inside [min, max] (bounds included, as torch), 0 outside."""
    inside = np.True_
    if min is not None:
        inside = F.logical_and(inside, F.ge(x, min))
    if max is not None:
        inside = F.logical_and(inside, F.le(x, max))
    return F.where(inside, g, 0.0)


def clamp_bound_grad(g: Any, x: Any, bound: Any, other: Any, is_min: bool) -> Any:
    """d clamp(x, min, max)/d bound, as torch: g to min where x < min < max, to max where x > max or max < min
    (clamp(x) = min(max(x, min), max) is then max, whatever x), else 0."""
    active = F.lt(x, bound) if is_min else F.gt(x, bound)
    if other is not None:
        active = F.logical_and(active, F.lt(bound, other)) if is_min else F.logical_or(active, F.lt(bound, other))
    return F.where(active, g, 0.0)


def expand_to(g: Any, shape: tuple[int, ...], to: tuple[int, ...]) -> Any:
    """Broadcast ``g`` of shape ``batch + shape`` up to ``batch + to`` (inverse of ``sum_to``)."""
    batch = tuple(g.shape[: len(g.shape) - len(shape)])
    lead = len(to) - len(shape)
    return F.broadcast_to(F.reshape(g, batch + (1,) * lead + tuple(shape)), batch + tuple(to))


def zeros(g: Any) -> Any:
    """A zero gradient shaped like ``g`` (for piecewise-constant ops: sign, floor, round)."""
    return np.zeros(np.shape(g), g.dtype)


def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """``dim`` (None, an int or a sequence, negatives allowed) as sorted non-negative axes.

    A 0-d input accepts 0 and -1 as torch does, naming no axis: the result is then ``()``. A dim named twice is
    torch's RuntimeError.
    """
    if dim is None:
        return tuple(range(ndim))
    if type(dim) is int and -ndim <= dim < ndim:  # the common case, in range
        return (dim % ndim,)
    if type(dim) is tuple and len(dim) == 1 and type(dim[0]) is int and -ndim <= dim[0] < ndim:  # (as from_end gives)
        return (dim[0] % ndim,)
    dims = (dim,) if isinstance(dim, int | np.integer) else tuple(dim)
    out = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                             f"{max(ndim, 1) - 1}], but got {d})")
        if ndim:
            if d % ndim in out:  # torch's error (NumPy's too); summing an axis once for (0, 0) hid a typo
                raise RuntimeError(f"dim {d % ndim} appears multiple times in the list of dims")
            out.append(d % ndim)
    return tuple(sorted(out))


def one_dim(dim: Any, ndim: int) -> int:
    """One dim as a non-negative index (0 for a 0-d input, as torch); IndexError (torch's message) when out
    of range."""
    return normalize_dims(dim, ndim)[0] if ndim else normalize_dims(dim, 1)[0]


def unreduce(g: Any, shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    """Spread the gradient of a reduction over ``dim`` back over the reduced input of ``shape``.

    g: (*batch, *reduced_shape) -> (*batch, *shape), each input element getting its output's g.
    """
    array = type(g) is np.ndarray or isinstance(g, np.generic)  # (reshaped and broadcast without op calls)
    g_shape = tuple(g.shape)
    if not keepdim and g_shape:  # (a 0-d g broadcasts as it is)
        g_shape = g_shape[: len(g_shape) - _reduced_ndim(shape, dim)] + kept_shape(shape, dim)
        g = g.reshape(g_shape) if array else F.reshape(g, g_shape)
    lead = len(g_shape) - len(shape)  # (batch dims)
    target = g_shape[:lead] + tuple(shape) if lead else tuple(shape)
    if array:
        return K.broadcast_view(g, target)
    if g.__class__ is Tensor and not g._requires_grad and not DISPATCH.active:  # (a create_graph pass's seed)
        return _constant_view(g, target)
    return F.broadcast_to(g, target)


def _constant_view(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``F.broadcast_to(g, shape)`` of a Tensor that records nothing, without the op call around the kernel: the same
    read-only view, marked as a view of ``g`` (an in-place change of ``g`` is seen by a check of it, as torch's)."""
    out = Tensor._wrap(K.broadcast_view(g.data, shape))
    mark_view(out, g, lambda base: F.broadcast_to(base, shape))
    return out


def unmean(g: Any, shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    """Gradient of a mean over ``dim``: g / count spread over the input, divided before it is spread (a view
    of the small g, not a pass over the input). An empty input has an empty gradient whatever the divisor."""
    return unreduce(g / max(count(shape, dim), 1), shape, dim, keepdim)


def kept_shape(shape: tuple[int, ...], dim: Any) -> tuple[int, ...]:
    """The shape a reduction over ``dim`` gives with keepdim=True."""
    axes = normalize_dims(dim, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _reduced_ndim(shape: tuple[int, ...], dim: Any) -> int:
    return len(shape) - len(normalize_dims(dim, len(shape)))


def batch_shape(g: Any, core: Any) -> tuple[int, ...]:
    """The leading batch dims of ``g`` in front of an array like ``core`` (anything with a shape)."""
    return tuple(np.shape(g)[: np.ndim(g) - np.ndim(core)])


def from_end(dims: Any, ndim: int, g: Any = None) -> tuple[int, ...]:
    """Dims of an ``ndim``-d array counted from the end, so they hold with leading batch dims too.

    With ``g`` given, return a full permutation of g's dims: its batch dims first, unmoved.
    """
    negative = tuple(int(d) % ndim - ndim if ndim else -1 for d in dims)
    if g is None:
        return negative
    lead = np.ndim(g) - ndim
    return tuple(range(lead)) + tuple(lead + ndim + d for d in negative)


def count(shape: tuple[int, ...], dim: Any) -> int:
    """How many elements a reduction over ``dim`` combines into each output element."""
    return math.prod(shape) if dim is None else math.prod([shape[d] for d in normalize_dims(dim, len(shape))])


# ----- indexing -----
def owned(index: Any) -> Any:
    """An index a rule reads, as an array; one that comes as a Tensor (a rule under create_graph) as a copy of
    its own: the graph the rule records keeps the values read now, which the node's version check vouched for,
    not a view of the Tensor's memory that a later in-place change would reach unchecked."""
    if isinstance(index, Tensor):
        data = index.data
        return data.copy() if type(data) is np.ndarray else data  # (a traced array under jit stays itself)
    return np.asarray(index)


def as_index(index: Any, own: bool = False) -> tuple[Any, ...]:
    """``index`` as a tuple NumPy understands: Tensors (and lists) inside it become arrays (a Tensor its own
    array, which may be a traced one under ``jit``; with ``own``, a copy, see ``owned``)."""
    items = index if isinstance(index, tuple) else (index,)
    for i in items:  # the common case, arrays, slices and ints only: nothing to convert
        if type(i) is not np.ndarray and type(i) is not slice and type(i) is not int:
            break
    else:
        return items
    if own:
        items = tuple([owned(i) if isinstance(i, Tensor) else i for i in items])
    return tuple([i.data if type(i) is Tensor else i if i is None or i is Ellipsis or isinstance(i, _AS_IS)
                  else i.data if isinstance(i, Tensor) else _index_array(i) for i in items])


def _index_array(items: Any) -> np.ndarray:
    """A list (or other sequence) as an index array: an empty one selects nothing, as NumPy's ``a[[]]`` (whose
    ``np.asarray([])`` would be a float array, which NumPy refuses as an index)."""
    array = np.asarray(items)
    return array.astype(np.intp) if array.size == 0 and array.dtype.kind == "f" else array


_AS_IS = (slice, int, np.integer, np.ndarray, Structured)  # index items NumPy takes as they are


def _is_basic(index: tuple[Any, ...]) -> bool:
    """True for indices NumPy answers with a view: ints, slices, None and Ellipsis only."""
    return all(i is None or i is Ellipsis or (isinstance(i, slice | int | np.integer) and not isinstance(i, bool))
               for i in index)


def _integer_arrays_ndim(index: tuple[Any, ...]) -> int:
    """The most dims among ``index``'s items when all are integer arrays, else -1 (also for an empty index)."""
    ndim = -1
    for i in index:
        if type(i) is not np.ndarray or i.dtype.kind not in "iu":
            return -1
        ndim = i.ndim if i.ndim > ndim else ndim
    return ndim


def core_index(index: Any, shape: tuple[int, ...]) -> tuple[tuple[Any, ...], int]:
    """``index`` into an array of ``shape``, rewritten to address the last ``len(shape)`` dims of an
    array with any leading batch dims; also returns how many dims ``x[index]`` has.

    A basic index is completed to name every dim, and so are integer arrays on the leading dims; any
    other becomes one integer array per dim (from the flat positions it picks), so NumPy never moves
    the indexed dims before the batch dims.
    """
    index = as_index(index, own=True)
    if len(index) <= len(shape):
        ndim = _integer_arrays_ndim(index)
        if ndim >= 0:  # x[rows, cols]: adjacent integer arrays, whose dims NumPy puts where they stand (after batch)
            rest = len(shape) - len(index)
            return (Ellipsis,) + index + (slice(None),) * rest, ndim + rest
    if _is_basic(index):
        named = sum(1 for i in index if i is not None and i is not Ellipsis)
        fill = (slice(None),) * (len(shape) - named)
        k = next((k for k, i in enumerate(index) if i is Ellipsis), len(index))
        full = index[:k] + fill + index[k + 1:]
        return (Ellipsis,) + full, sum(1 for i in full if not isinstance(i, int | np.integer))
    picked = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)[index]
    return (Ellipsis,) + np.unravel_index(picked, shape), picked.ndim


def unindex(g: Any, x_shape: tuple[int, ...], index: Any) -> Any:
    """Gradient of ``x[index]``: g added into zeros shaped like x at the indexed places (repeated
    indices add up, as torch). g: (*batch, *x[index].shape) -> (*batch, *x_shape)."""
    full, ndim = core_index(index, x_shape)
    zeros = np.zeros(tuple(g.shape[: g.ndim - ndim]) + tuple(x_shape), g.dtype)
    repeats = any(isinstance(i, np.ndarray) for i in full)  # only integer arrays can name a place twice
    if type(g) is np.ndarray:  # an array gradient goes into the fresh zeros in place (no copy, no op call)
        return K.put(zeros, full, g, repeats)
    return F.index_put(zeros, full, g, accumulate=repeats)


def take(g: Any, x_shape: tuple[int, ...], index: Any) -> Any:
    """``g[index]`` for an index into x, keeping g's batch dims. g: (*batch, *x_shape) -> (*batch, *x[index].shape)."""
    return F.getitem(g, core_index(index, x_shape)[0])


def zero_at(g: Any, x_shape: tuple[int, ...], index: Any) -> Any:
    """g with zeros at ``index`` (the places an assignment ``x[index] = v`` overwrote)."""
    return F.index_put(g, core_index(index, x_shape)[0], 0.0)


def pad_to(g: Any, shape: tuple[int, ...]) -> Any:
    """g zero-padded at the end of its last ``len(shape)`` dims up to ``shape``."""
    pairs = [(0, n - m) for n, m in zip(shape, np.shape(g)[np.ndim(g) - len(shape):])]
    return F.pad(g, tuple(p for pair in reversed(pairs) for p in pair))


def unnarrow(g: Any, x_shape: tuple[int, ...], dim: int, start: int, length: int) -> Any:
    """Gradient of ``narrow``: g zero-padded back to x's size along ``dim`` (``start`` >= 0)."""
    d = dim % len(x_shape)
    after = len(x_shape) - 1 - d
    return F.pad(g, (0, 0) * after + (start, x_shape[d] - start - length))


def unselect(g: Any, x_shape: tuple[int, ...], dim: int, index: int) -> Any:
    """Gradient of ``select``: g given back the selected dim, then zero-padded around ``index``.
    g: (*batch, *x_shape without dim) -> (*batch, *x_shape)."""
    d = dim % len(x_shape)
    batch = tuple(np.shape(g)[: np.ndim(g) - len(x_shape) + 1])
    g = F.reshape(g, batch + tuple(x_shape[:d]) + (1,) + tuple(x_shape[d + 1:]))
    return unnarrow(g, x_shape, d, index % x_shape[d], 1)


def unconcat(g: Any, shapes: list[tuple[int, ...]], dim: int) -> list[Any]:
    """Gradient of ``cat``: g cut back along ``dim`` into one piece per input shape."""
    d = dim % len(shapes[0]) - len(shapes[0])  # from the end: g may have batch dims
    starts = np.cumsum([0] + [s[d] for s in shapes[:-1]])
    return [F.narrow(g, d, int(start), s[d]) for start, s in zip(starts, shapes)]


def unstack(g: Any, n: int, ndim: int, dim: int) -> list[Any]:
    """Gradient of ``stack`` of ``n`` inputs into an ``ndim``-d result: g's slices along ``dim``."""
    d = dim % ndim - ndim
    return [F.select(g, d, i) for i in range(n)]


# ----- linalg -----
def constant(x: Any) -> Any:
    """``x`` cut from the graph: for a piecewise-constant factor (a sign), whose derivative is exactly 0, so
    that no zero gradient travels on into rules that would turn it into 0 * inf."""
    return x.detach() if hasattr(x, "detach") else x


def mT(X: Any) -> Any:
    """The transpose of the last two dims (a stack of matrices transposed): a view, so ``@`` hands BLAS a
    transposed operand and copies nothing."""
    return X.swapaxes(-2, -1) if type(X) is np.ndarray else F.transpose(X, -2, -1)  # (an array: no op call)


def mH(X: Any) -> Any:
    """The conjugate transpose of the last two dims (the transpose for real X)."""
    return mT(F.conj(X))


def as_column(v: Any) -> Any:
    """(..., n) -> (..., n, 1)."""
    return F.reshape(v, tuple(v.shape) + (1,))


def as_row(v: Any) -> Any:
    """(..., n) -> (..., 1, n)."""
    return F.reshape(v, tuple(v.shape[:-1]) + (1,) + tuple(v.shape[-1:]))


def lower_part(X: Any) -> Any:
    """tril(X) of square matrices, as a product with a constant mask."""
    return X * np.tri(X.shape[-1])


def lower_grad(G: Any) -> Any:
    """The gradient w.r.t. the lower triangle an op reads (eigh, cholesky), from G paired with Hermitian
    perturbations: tril(S) - diag(S) / 2, S = G + G^H (an off-diagonal entry stands for itself and its mirror's
    conjugate; a diagonal entry counts with its real part only, as LAPACK reads it)."""
    S = G + mH(G)
    return lower_part(S) - 0.5 * S * np.eye(G.shape[-1])


def off_diagonal_inverse(d: Any) -> Any:
    """1 / d off the diagonal and 0 on it (d: differences of eigen/singular values, zero diagonal)."""
    eye = np.eye(d.shape[-1])
    return (1 - eye) / (d + eye)


def zeros_for_undefined(g: tuple[Any, ...], out: tuple[Any, ...]) -> tuple[Any, ...]:
    """A multi-output op's gradients with zeros for the outputs that received none (None), carrying the
    leading batch dims of the others."""
    given, o = next((gi, oi) for gi, oi in zip(g, out) if gi is not None)
    batch = tuple(np.shape(given)[: np.ndim(given) - np.ndim(o)])
    return tuple(gi if gi is not None else np.zeros(batch + np.shape(oi), np.result_type(oi)) for gi, oi in zip(g, out))


def column_slice(X: Any, start: int, stop: int) -> Any:
    """X[..., :, start:stop] written as a product with a constant, so it records as one op."""
    return X @ np.eye(X.shape[-1])[:, start:stop]


# ----- forward mode (jvp rules) -----
def align(t: Any, primal: Any, ndim: int) -> Any:
    """A tangent ``t`` of shape (*batch, *primal.shape) as (*batch, 1, ..., 1, *primal.shape) with ``ndim``
    dims after the batch, so it broadcasts against ``ndim``-d values with its batch dims in front."""
    shape = tuple(np.shape(primal))
    batch = batch_shape(t, primal)
    if not batch or len(shape) >= ndim:
        return t
    return F.reshape(t, batch + (1,) * (ndim - len(shape)) + shape)


def ones(value: Any) -> Any:
    """Ones shaped like ``value``: the ``g`` that turns a VJP rule into the partials d out / d x."""
    return np.ones(np.shape(value), np.result_type(value, np.float32))


def reduce_jvp(x_t: Any, partials: Any, dim: Any, keepdim: bool) -> Any:
    """JVP of a reduction over ``dim`` from its partials p_i = d out / d x_i (x's shape): sum_i p_i x_t_i
    over the reduced dims (counted from the end: x_t may carry batch dims)."""
    ndim = np.ndim(partials)
    dims = from_end(normalize_dims(dim, ndim), ndim) if ndim else ()
    return F.sum(x_t * partials, dims, keepdim)


def real_reduce_jvp(x_t: Any, grads: Any, dim: Any, keepdim: bool) -> Any:
    """JVP of a real-valued reduction from its gradients (its VJP with g = 1, x's shape): Re sum_i conj(grad_i) dx_i
    (for complex x, grad = d/dRe + i d/dIm), which is sum_i grad_i dx_i for real x."""
    out = reduce_jvp(x_t, F.conj(grads), dim, keepdim)
    return F.real(out) if is_complex(out) else out


def batched(tangents: list[Any], primals: list[Any]) -> list[Any]:
    """Tangents of several inputs given one common leading batch (views of those without it), for ops
    that join them (cat, stack)."""
    batch = max((batch_shape(t, p) for t, p in zip(tangents, primals)), key=len)
    return [t if batch_shape(t, p) else F.broadcast_to(t, batch + tuple(np.shape(p)))
            for t, p in zip(tangents, primals)]


# sinc'(x) = x sum_k a_k x^(2k - 2), a_k = (-1)^k 2k pi^(2k) / (2k + 1)!: 12 terms are exact to rounding for |x| < 1/2
_SINC_SLOPE = [(-1) ** k * 2 * k * math.pi ** (2 * k) / math.factorial(2 * k + 1) for k in range(1, 13)]


def sinc_grad(g: Any, x: Any) -> Any:
    """d sinc(x) / dx = (cos(pi x) - sinc(x)) / x, and for |x| < 1/2, where that difference cancels (at x = 1e-8 the
    second derivative came out -5.4 for -pi^2 / 3, the third 6e8 for 2e-7), its power series, so derivatives of every
    order are right near 0 (torch's are not). Each branch sees x only where it is taken (1 or 0 elsewhere), so no
    0 / 0 or overflow reaches a derivative through the other."""
    small = F.lt(F.abs(x), 0.5)
    near, far = F.where(small, x, 0.0), F.where(small, 1.0, x)
    z = near * near
    series = _SINC_SLOPE[-1]
    for a in reversed(_SINC_SLOPE[:-1]):
        series = series * z + a
    return g * F.where(small, near * series, (F.cos(far * math.pi) - F.sinc(far)) / far)


