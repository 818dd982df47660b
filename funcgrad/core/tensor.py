"""``Tensor``: an ndarray plus autograd metadata.

The array is ``data``; the metadata is what the graph needs (``requires_grad``, ``grad``,
``grad_fn``, ``output_nr``, a version counter shared with views, hooks). Arithmetic and the other
differentiable methods are the op table's functions, installed when ``funcgrad.ops`` is imported
(``funcgrad.ops.install``).
"""
from __future__ import annotations

import copy
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.grad_mode import NO_VERSION, STATE
from funcgrad.core.structured import Structured

if TYPE_CHECKING:
    from funcgrad.core.graph import AccumulateGrad, Node, RemovableHandle

__all__ = ["Tensor"]


def _check_differentiable_dtype(dtype: np.dtype) -> None:
    if dtype.kind not in "fc":
        raise RuntimeError(f"only Tensors of floating point and complex dtype can require gradients, "
                           f"got {dtype}; convert first, e.g. x.to(float) or tensor(data, dtype=float)")


_CUT = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
_CUT_HINT = (" (NumPy's functions and ufuncs applied to the Tensor itself keep the graph, np.asarray cannot: build "
             "arrays from Tensors with np.stack or funcgrad.numpy.array; SciPy's array-API functions such as "
             "scipy.optimize.rosen take Tensors once SCIPY_ARRAY_API=1 is set before SciPy is imported.)")


def _warn_scalar(t: Tensor) -> None:
    if t._requires_grad and STATE.grad_enabled:  # the number has no history: say so, as torch does
        warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                      "Consider using tensor.detach() first. (The number has no derivative: writing a Tensor into "
                      "a NumPy array, a[i] = t, converts it so and cuts the gradient; build the array with "
                      "funcgrad.numpy.array or stack, or write into a Tensor.)", UserWarning, stacklevel=3)


def _check_grad(tensor: Tensor, grad: Any) -> None:
    """PyTorch's checks of an assignment ``tensor.grad = grad``."""
    if not isinstance(grad, Tensor):
        kind = type(grad)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {name}")
    if grad.shape != tensor.shape:
        raise RuntimeError(f"attempting to assign a gradient of size '{list(grad.shape)}' to a tensor of size "
                           f"'{list(tensor.shape)}'. Please ensure that the gradient and the tensor are the same size")
    if grad.dtype != tensor.dtype:
        raise RuntimeError(f"attempting to assign a gradient with dtype '{grad.dtype}' to a tensor with dtype "
                           f"'{tensor.dtype}'. Please ensure that the gradient and the tensor have the same dtype")


class _Extra:
    """Rarely used per-tensor state, kept out of the hot path: leaf hooks, views, retain_grad."""

    __slots__ = ("acc", "hooks", "post_acc_hooks", "base", "view_fn", "creation", "views", "retains_grad",
                 "tangents")

    def __init__(self) -> None:
        self.acc: Any = None             # weakref to this leaf's AccumulateGrad
        self.hooks: dict[int, Callable[..., Any]] | None = None
        self.post_acc_hooks: dict[int, Callable[..., Any]] | None = None
        self.base: Tensor | None = None  # the tensor this one is a view of
        self.view_fn: Callable[[Any], Any] | None = None  # recreates this view from base
        self.creation: Any = None  # how a view was made, when that forbids writing it in place (views.CreationMeta)
        self.views: list[Any] | None = None  # weakrefs to the views of this (base) tensor
        self.retains_grad = False
        self.tangents: dict[Any, Tensor] | None = None  # forward-mode tangents by dual level (core.tangents)


class Tensor:
    """A NumPy array that can record how it was computed, so gradients can flow back to it.

    Args:
        data: anything ``np.asarray`` accepts (used as is when it is already an ndarray).
        requires_grad: record operations on this tensor for differentiation (floating dtypes only).

    Example:
        >>> import funcgrad as fg
        >>> x = fg.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4.])
    """

    __slots__ = ("data", "_requires_grad", "_grad", "grad_fn", "output_nr", "_version_counter", "_extra",
                 "__weakref__")
    __array_priority__ = 1000  # ndarray op Tensor defers to Tensor's reflected operator
    data: Any  # an ndarray (or, inside derivative passes, a structured stack that behaves as one)

    if TYPE_CHECKING:  # what funcgrad.ops.install gives the class when the op layer is imported
        def __getattr__(self, name: str) -> Any: ...
        def __add__(self, other: Any) -> Any: ...
        def __radd__(self, other: Any) -> Any: ...
        def __sub__(self, other: Any) -> Any: ...
        def __rsub__(self, other: Any) -> Any: ...
        def __mul__(self, other: Any) -> Any: ...
        def __rmul__(self, other: Any) -> Any: ...
        def __truediv__(self, other: Any) -> Any: ...
        def __rtruediv__(self, other: Any) -> Any: ...
        def __floordiv__(self, other: Any) -> Any: ...
        def __mod__(self, other: Any) -> Any: ...
        def __pow__(self, other: Any) -> Any: ...
        def __rpow__(self, other: Any) -> Any: ...
        def __matmul__(self, other: Any) -> Any: ...
        def __rmatmul__(self, other: Any) -> Any: ...
        def __neg__(self) -> Any: ...
        def __abs__(self) -> Any: ...
        def __invert__(self) -> Any: ...
        def __and__(self, other: Any) -> Any: ...
        def __or__(self, other: Any) -> Any: ...
        def __xor__(self, other: Any) -> Any: ...
        def __lt__(self, other: Any) -> Any: ...
        def __le__(self, other: Any) -> Any: ...
        def __gt__(self, other: Any) -> Any: ...
        def __ge__(self, other: Any) -> Any: ...
        def __getitem__(self, index: Any) -> Any: ...
        def __setitem__(self, index: Any, value: Any) -> None: ...

    def __init__(self, data: Any, requires_grad: bool = False) -> None:
        self.data = data if type(data) is np.ndarray or isinstance(data, Structured) else np.asarray(data)
        self._requires_grad = False
        self._grad: Tensor | None = None
        self.grad_fn: Node | None = None
        self.output_nr = 0
        self._version_counter = NO_VERSION if STATE.inference else [0]  # made in inference mode: as torch
        self._extra: _Extra | None = None
        if requires_grad:
            self.requires_grad = True

    # ----- construction on the hot path ----------------------------------------------------------
    @classmethod
    def _wrap(cls, data: Any) -> Tensor:
        """A tensor with no history around ``data`` (a structured batch of tangents stays structured: those
        live inside forward-mode passes only and are made dense where they leave, see ``unpack_dual``)."""
        t = object.__new__(cls)
        t.data = data if type(data) is np.ndarray or isinstance(data, Structured) else np.asarray(data)
        t._requires_grad = False
        t._grad = t.grad_fn = t._extra = None
        t.output_nr = 0
        t._version_counter = [0]
        return t

    @classmethod
    def _from_node(cls, data: Any, node: Node, output_nr: int, counter: list[int]) -> Tensor:
        """Output ``output_nr`` of ``node``."""
        t = object.__new__(cls)
        t.data = data
        t._requires_grad = True
        t._grad = t._extra = None
        t.grad_fn = node
        t.output_nr = output_nr
        t._version_counter = counter
        return t

    def _edge(self) -> tuple[Node, int]:
        """Where a gradient for this tensor goes: its grad_fn's output, or its AccumulateGrad."""
        if self.grad_fn is not None:
            return (self.grad_fn, self.output_nr)
        return (self._accumulator(), 0)

    def _accumulator(self) -> AccumulateGrad:
        extra = self._extra or self._get_extra()
        node = extra.acc() if extra.acc is not None else None
        if node is None:
            node = graph.AccumulateGrad(self)
            extra.acc = weakref.ref(node)
        return node

    def _get_extra(self) -> _Extra:
        if self._extra is None:
            self._extra = _Extra()
        return self._extra

    # ----- autograd attributes -------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients are computed for this tensor (settable on leaves)."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want "
                               "to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        if value:
            _check_differentiable_dtype(self.data.dtype)
            if self._version_counter is NO_VERSION and not STATE.inference:
                raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not "
                                   "allowed.")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place and return self."""
        if self.grad_fn is not None and requires_grad:
            return self  # a non-leaf already requires grad; only False is an error, as torch
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | None:
        """The gradient ``backward`` accumulated here (None before). Assignable: None, or a Tensor of this
        tensor's shape and dtype (as torch)."""
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            _check_grad(self, value)
        self._grad = value

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded operation."""
        return self.grad_fn is None

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf tensor on which ``retain_grad()`` was called."""
        return self._extra is not None and self._extra.retains_grad

    @property
    def _version(self) -> int:
        """How many in-place changes this tensor's memory has seen (shared with views)."""
        if self._version_counter is NO_VERSION:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter[0]

    def is_inference(self) -> bool:
        """True for a tensor computed in inference mode (or a view of one): it may not be saved for backward,
        nor written in place outside inference mode, as torch."""
        return self._version_counter is NO_VERSION

    @property
    def _base(self) -> Tensor | None:
        """The tensor this one is a view of, or None."""
        return self._extra.base if self._extra is not None else None

    @property
    def is_view(self) -> bool:
        """True if this tensor shares memory with a base tensor through a view operation."""
        return self._base is not None

    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
                 inputs: Sequence[Tensor] | Tensor | None = None) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves it depends on.

        Args:
            gradient: d(something)/d(self); may be omitted for a single-element tensor.
            retain_graph: keep the saved values for another backward (default: ``create_graph``).
            create_graph: record the backward itself, for higher derivatives.
            inputs: accumulate only into these tensors.
        """
        api.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` whenever a gradient for this tensor is computed; a Tensor returned
        replaces the gradient. Returns a handle whose ``remove()`` unregisters it."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient; "
                               "call requires_grad_() first if it is a leaf")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_prehook(self.output_nr, hook)
        extra = self._get_extra()
        if extra.hooks is None:
            extra.hooks = {}
        return graph.add_hook(extra.hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> RemovableHandle:
        """Call ``hook(tensor)`` after a gradient was accumulated into this leaf's ``.grad``."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        extra = self._get_extra()
        if extra.post_acc_hooks is None:
            extra.post_acc_hooks = {}
        return graph.add_hook(extra.post_acc_hooks, hook)

    def retain_grad(self) -> None:
        """Make this non-leaf tensor keep its ``.grad`` after backward (no-op on leaves)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self.retains_grad:
            return
        self._get_extra().retains_grad = True
        self.grad_fn._hook_set().retains[self.output_nr] = weakref.ref(self)

    def detach(self) -> Tensor:
        """A tensor sharing this one's memory and version counter, with no history."""
        t = Tensor._wrap(self.data)
        t._version_counter = self._version_counter
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor from its history, in place (not a view's: its base's next in-place op would give it one
        again; ``detach()`` it instead, as torch says)."""
        if self._extra is not None and self._extra.base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self.output_nr = 0
        self._requires_grad = False
        return self

    # ----- copies --------------------------------------------------------------------------------
    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """A leaf with copies of the values, dtype, ``requires_grad`` and ``.grad``; a non-leaf raises, as torch
        (copying its history would let a later backward reach copies of its leaves)."""
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment. For a copy of a computed tensor, use detach().clone() (no "
                               "history) or clone() (differentiable).")
        new = type(self)._wrap(copy.deepcopy(self.data, memo))
        memo[id(self)] = new
        new._requires_grad = self._requires_grad
        new._grad = copy.deepcopy(self._grad, memo)
        if hasattr(self, "__dict__"):  # attributes of a subclass
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        """Pickled as torch does: the values and ``requires_grad`` (a non-leaf or a view comes back as a new
        leaf with its own memory; ``.grad`` and hooks are not kept)."""
        state = self.__dict__ if hasattr(self, "__dict__") else None
        return (_rebuild, (type(self), np.asarray(self.data), self._requires_grad, state))

    # ----- NumPy side ----------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, a tuple of ints."""
        return self.data.shape

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self.data.ndim

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype."""
        return self.data.dtype

    def is_complex(self) -> bool:
        """Whether the dtype is complex (as ``torch.Tensor.is_complex``)."""
        return self.data.dtype.kind == "c"

    def is_floating_point(self) -> bool:
        """Whether the dtype is a real floating type (as ``torch.Tensor.is_floating_point``: complex is not)."""
        return self.data.dtype.kind == "f"

    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        """The shape, or the length of dimension ``dim``."""
        return self.data.shape if dim is None else self.data.shape[dim]

    def dim(self) -> int:
        """The number of dimensions."""
        return self.data.ndim

    def numel(self) -> int:
        """The number of elements."""
        return self.data.size

    def __len__(self) -> int:
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self.data)

    def numpy(self) -> np.ndarray:
        """The underlying array (shared memory). Raises if the tensor requires grad while grad mode is on
        (then the array would silently cut the graph), as torch; allowed under ``no_grad`` and inside a
        custom ``Function.forward``."""
        if self._requires_grad and STATE.grad_enabled:
            raise RuntimeError(_CUT)
        if DISPATCH.active:  # a layer (jet) may carry a series for it, which the array would drop
            DISPATCH.note_converted(self)
        return self.data

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.data.size != 1:
            raise RuntimeError(f"a Tensor with {self.data.size} elements cannot be converted to Scalar")
        if DISPATCH.active:  # a layer (jet) may carry a series for it, which the number would drop
            DISPATCH.note_converted(self)
        return self.data.item()

    def tolist(self) -> Any:
        """Nested Python lists of the values."""
        if DISPATCH.active:
            DISPATCH.note_converted(self)
        return self.data.tolist()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if self._requires_grad and STATE.grad_enabled:
            raise RuntimeError(_CUT + _CUT_HINT)
        if DISPATCH.active:  # a layer (jet) may carry a series for it, which the array would drop
            DISPATCH.note_converted(self)
        data = self.data if type(self.data) is np.ndarray else np.asarray(self.data)  # (a structured batch)
        if dtype is not None and dtype != data.dtype:
            return data.astype(dtype)
        return data.copy() if copy else data

    def __float__(self) -> float:
        _warn_scalar(self)
        return float(self.item())

    def __int__(self) -> int:
        _warn_scalar(self)
        return int(self.item())

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.data.item())

    def __index__(self) -> int:
        if self.data.dtype.kind not in "iub" or self.data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.data.item())

    def __hash__(self) -> int:
        return id(self)

    def __iter__(self) -> Any:
        if self.data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.data.shape[0]))

    def __repr__(self) -> str:
        body = np.array2string(self.data, separator=", ", prefix="tensor(")
        extras = []
        if self.data.dtype not in (np.float64, np.int64, np.bool_) and self.data.size:
            extras.append(f"dtype={self.data.dtype}")
        if self.data.size == 0:
            extras.append(f"size={self.data.shape}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        return f"tensor({', '.join([body] + extras)})"


def _rebuild(cls: type[Tensor], data: np.ndarray, requires_grad: bool, state: dict[str, Any] | None) -> Tensor:
    """The tensor ``Tensor.__reduce_ex__`` pickled."""
    tensor = cls._wrap(data)
    tensor._requires_grad = requires_grad
    if state:
        tensor.__dict__.update(state)
    return tensor


# The graph and ``backward`` refer to Tensor, so they are imported once it is defined.
from funcgrad.core import backward as api  # noqa: E402
from funcgrad.core import graph  # noqa: E402
