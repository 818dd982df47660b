"""PyTorch's other names for the table's ops (``absolute``, ``arccos``, ``multiply``, ``greater``, ...), the small
functions torch code calls that are one op with fixed arguments (``clamp_min``, ``divide`` with a rounding mode,
``addmm``, ``mv``, ``reshape_as``, ``masked_select``, ``nonzero``, ...), and torch's full signatures of table ops
(``add``/``sub`` with ``alpha``, ``div`` with ``rounding_mode``, ``var``/``std`` with ``unbiased``, ``norm`` with
``"nuc"``). Each is a function and a Tensor method, as in torch, and differentiable wherever the op it names is.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.core.tensor import Tensor
from funcgrad.ops.derivatives import elementwise, indexing, reduction
from funcgrad.ops.linalg_norms import matrix_norm
from funcgrad.ops.registry import COMPOSITES, composite, tensor_method, torch_signature

__all__ = ["clamp_min", "clamp_max", "clip", "divide", "subtract", "addmm", "addmv", "addr", "addbmm", "baddbmm", "mv",
           "ger", "reshape_as", "masked_select", "nonzero", "argwhere", "signbit", "isposinf", "isneginf", "isreal",
           "ravel", "t", "ALIASES"]

# torch's second name -> the op's (the alias is the op's function itself: same docs, same node names)
ALIASES = {"absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arccosh": "acosh",
           "arcsinh": "asinh", "arctanh": "atanh", "arctan2": "atan2", "negative": "neg", "multiply": "mul",
           "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
           "fix": "trunc", "concat": "cat", "concatenate": "cat"}


def _data(a: Any) -> Any:
    return a.data if isinstance(a, Tensor) else a


def _like(x: Any, array: np.ndarray) -> Any:
    """``array`` as a Tensor when ``x`` is one (a result without gradient)."""
    return Tensor(array) if isinstance(x, Tensor) else array


# ----- clamping and division -----------------------------------------------------------------------------
@composite
def clamp_min(x: Any, min: Any) -> Any:  # noqa: A002
    """``clamp(x, min=min)``."""
    return F.clamp(x, min, None)


@composite
def clamp_max(x: Any, max: Any) -> Any:  # noqa: A002
    """``clamp(x, max=max)``."""
    return F.clamp(x, None, max)


@composite
def clip(x: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """``clamp`` under torch's other name."""
    return F.clamp(x, min, max)


@composite
def divide(x: Any, y: Any, *, rounding_mode: str | None = None) -> Any:
    """``x / y``; ``rounding_mode`` ``"trunc"`` or ``"floor"`` rounds the quotient (then no gradient), as torch.div."""
    if rounding_mode is None:
        return F.div(x, y)
    if rounding_mode == "floor":
        return F.floor_divide(x, y)
    if rounding_mode == "trunc":
        quotient = F.trunc(F.div(x, y))  # a zero gradient, as torch's
        dtype = np.result_type(_data(x), _data(y))
        return F.to_copy(quotient, dtype) if dtype.kind in "iu" else quotient
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


@composite
def subtract(x: Any, y: Any, *, alpha: Any = 1) -> Any:
    """``x - alpha * y``, as torch.subtract (and ``sub``)."""
    return F.sub(x, _scaled(x, y, alpha))


def _scaled(x: Any, y: Any, alpha: Any) -> Any:
    """``alpha * y`` (``y`` itself for 1), with torch's checks of ``alpha`` against the inputs' dtype."""
    if type(alpha) is int and alpha == 1:  # the common call: nothing to check
        return y
    kind = np.result_type(_data(x), _data(y)).kind
    if kind in "iub" and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if kind != "c" and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    return y if alpha == 1 else F.mul(y, alpha)


# ----- torch's full signatures of table ops (funcgrad.ops.<name> stays the table's op) --------------------------
@torch_signature("add")
def add(x: Any, y: Any, *, alpha: Any = 1) -> Any:
    """``x + alpha * y``, as torch.add.

    Example:
        >>> import funcgrad as fg
        >>> fg.add(fg.tensor([1.0, 2.0]), fg.tensor([1.0, 1.0]), alpha=3)
        tensor([4., 5.])
    """
    return F.add(x, _scaled(x, y, alpha))


torch_signature("sub")(subtract)
torch_signature("div")(divide)


def _with_unbiased(op: Callable[..., Any]) -> Callable[..., Any]:
    """``op`` (var or std) also taking torch's older ``unbiased`` flag: ``op(x, unbiased)``, ``op(x, dim, unbiased,
    keepdim)`` or ``unbiased=`` (``correction=1`` when true, 0 when false)."""
    def moment(x: Any, *args: Any, unbiased: bool | None = None, **kwargs: Any) -> Any:
        if args and isinstance(args[0], bool | np.bool_):  # torch's op(input, unbiased): a bool is no dim
            unbiased, args = bool(args[0]), args[1:]
        if unbiased is not None:
            if "correction" in kwargs:
                raise TypeError(f"{op.__name__}() received an invalid combination of arguments: give correction "
                                "or unbiased, not both")
            kwargs["correction"] = int(unbiased)
        return op(x, *args, **kwargs)
    moment.__name__ = moment.__qualname__ = op.__name__
    signature = inspect.signature(op)  # shown by help(): the op's, and unbiased
    unbiased = inspect.Parameter("unbiased", inspect.Parameter.KEYWORD_ONLY, default=None)
    moment.__signature__ = signature.replace(parameters=[*signature.parameters.values(), unbiased])  # type: ignore[attr-defined]
    moment.__doc__ = (f"{op.__doc__ or op.__name__}\n\n``unbiased`` (torch's older flag) is ``correction=1`` when "
                      "true, 0 when false.")
    return torch_signature(op.__name__)(moment)


var = _with_unbiased(reduction.var)
std = _with_unbiased(reduction.std)


@torch_signature("norm")
def norm(x: Any, p: Any = "fro", *args: Any, **kwargs: Any) -> Any:
    """The ``p``-norm of ``x`` over ``dim`` (all dims when None) as a vector, or with ``p="nuc"`` the nuclear norm
    of a matrix (``dim`` two dims; all of a 2-D ``x`` when None), as torch.norm."""
    if isinstance(p, str) and p == "nuc":
        return _nuclear_norm(x, *args, **kwargs)
    return reduction.norm(x, p, *args, **kwargs)


def _nuclear_norm(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """The sum of the singular values over ``dim`` (all dims, which must be two, when None)."""
    dims: Any = tuple(range(np.ndim(_data(x)))) if dim is None else dim  # torch's error when they are not two
    return matrix_norm(x, "nuc", dims, keepdim)


# ----- products with an added term ---------------------------------------------------------------------------
def _scaled_sum(x: Any, product: Any, beta: Any, alpha: Any) -> Any:
    """``beta * x + alpha * product``; ``x`` is ignored when beta is 0 (NaN and inf in it too), as torch."""
    scaled = product if alpha == 1 else F.mul(product, alpha)
    if beta == 0:  # x only broadcasts the result and gets a zero gradient
        return F.add(scaled, F.mul(F.where(F.isfinite(x), x, 0.0), 0.0))
    return F.add(x if beta == 1 else F.mul(x, beta), scaled)


@composite
def addmm(x: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * x + alpha * (mat1 @ mat2)`` for matrices, as torch.addmm."""
    return _scaled_sum(x, F.mm(mat1, mat2), beta, alpha)


@composite
def addmv(x: Any, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * x + alpha * (mat @ vec)``, as torch.addmv."""
    return _scaled_sum(x, mv(mat, vec), beta, alpha)


@composite
def addr(x: Any, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * x + alpha * outer(vec1, vec2)``, as torch.addr."""
    return _scaled_sum(x, F.outer(vec1, vec2), beta, alpha)


@composite
def addbmm(x: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * x + alpha * sum_i batch1[i] @ batch2[i]``, as torch.addbmm."""
    return _scaled_sum(x, F.sum(F.bmm(batch1, batch2), 0), beta, alpha)


@composite
def baddbmm(x: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * x + alpha * (batch1 @ batch2)`` batch by batch, as torch.baddbmm."""
    return _scaled_sum(x, F.bmm(batch1, batch2), beta, alpha)


@composite
def mv(x: Any, vec: Any) -> Any:
    """The matrix-vector product ``x @ vec``, as torch.mv."""
    if np.ndim(_data(x)) != 2 or np.ndim(_data(vec)) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {np.ndim(_data(x))}, {np.ndim(_data(vec))}")
    return F.matmul(x, vec)


@composite
def ger(x: Any, vec2: Any) -> Any:
    """``outer`` under its old name."""
    return F.outer(x, vec2)


# ----- shapes and selections ----------------------------------------------------------------------------------
@composite
def reshape_as(x: Any, other: Any) -> Any:
    """``x`` reshaped to ``other``'s shape."""
    return F.reshape(x, np.shape(_data(other)))


@composite
def ravel(x: Any) -> Any:
    """The elements as a 1-D tensor (a view when possible), as torch.ravel."""
    return F.reshape(x, (-1,))


@composite
def t(x: Any) -> Any:
    """The transpose of a matrix; a vector or a scalar as it is, as torch.t."""
    if np.ndim(_data(x)) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {np.ndim(_data(x))}D")
    return F.permute(x, tuple(range(np.ndim(_data(x)) - 1, -1, -1)))


@composite
def masked_select(x: Any, mask: Any) -> Any:
    """The elements of ``x`` where ``mask`` (broadcast with it) is true, as a 1-D tensor, as torch.masked_select."""
    m = np.asarray(_data(mask))
    if m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = np.broadcast_shapes(np.shape(_data(x)), m.shape)
    return F.getitem(F.broadcast_to(x, shape), (np.broadcast_to(m, shape),))


@composite
def nonzero(x: Any, *, as_tuple: bool = False) -> Any:
    """The indices of the nonzero elements: an int64 tensor of shape (count, ndim), or with ``as_tuple`` one index
    tensor per dim, as torch.nonzero."""
    a = np.asarray(_data(x))
    if as_tuple:
        return tuple(_like(x, i) for i in np.nonzero(np.atleast_1d(a)))
    return _like(x, np.argwhere(a).astype(np.int64))


@composite
def argwhere(x: Any) -> Any:
    """``nonzero(x)``: the indices of the nonzero elements as rows."""
    return nonzero(x)


# ----- predicates and signs -------------------------------------------------------------------------------------
def _predicate(test: Callable[[Any], Any], doc: str) -> Callable[[Any], Any]:
    """A composite named after NumPy's elementwise ``test``: its bool result, as a Tensor for a Tensor ``x``."""
    def predicate(x: Any) -> Any:
        return _like(x, test(_data(x)))
    predicate.__name__ = predicate.__qualname__ = test.__name__
    predicate.__doc__ = doc
    return composite(predicate)


signbit = _predicate(np.signbit, "Whether the sign bit is set (true for -0.0), a bool tensor.")
isposinf = _predicate(np.isposinf, "Whether each element is +inf.")
isneginf = _predicate(np.isneginf, "Whether each element is -inf.")
isreal = _predicate(np.isreal, "Whether each element has no imaginary part (true for real dtypes).")


@tensor_method("where")
def _where(x: Any, condition: Any, y: Any) -> Any:
    """``x.where(condition, y)`` is ``where(condition, x, y)``, as torch's ``Tensor.where`` (the condition first)."""
    return F.where(condition, x, y)


for _alias, _name in ALIASES.items():  # the op itself under the other name: no wrapper call
    COMPOSITES[_alias] = globals()[_alias] = getattr(indexing if _name == "cat" else elementwise, _name)
__all__ += sorted(ALIASES)
