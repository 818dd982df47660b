"""The backward graph: ``Node`` (one recorded backward step), ``AccumulateGrad`` (the sink of a leaf),
saved values with their version checks, and hook handles.

A node knows its edges and how to turn output gradients into input gradients; it knows nothing
about the order in which the engine runs nodes.
"""
from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from funcgrad.tensor import Tensor

__all__ = ["Node", "AccumulateGrad", "RemovableHandle"]

_sequence = itertools.count()
next_sequence_nr = _sequence.__next__

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class RemovableHandle:
    """Returned by ``register_*hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_key")
    _ids = itertools.count()

    def __init__(self, hooks: dict[int, Callable[..., Any]]) -> None:
        self._hooks = hooks
        self._key = next(RemovableHandle._ids)

    def remove(self) -> None:
        """Unregister the hook; removing twice is harmless."""
        self._hooks.pop(self._key, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def add_hook(hooks: dict[int, Callable[..., Any]], fn: Callable[..., Any]) -> RemovableHandle:
    """Insert ``fn`` into an ordered hook dict and return its handle."""
    if not callable(fn):
        raise TypeError(f"a hook must be callable, got {type(fn).__name__}")
    handle = RemovableHandle(hooks)
    hooks[handle._key] = fn
    return handle


class _NodeHooks:
    """The hooks and metadata of one node, allocated only when first used."""

    __slots__ = ("tensor_pre", "pre", "post", "retains", "metadata")

    def __init__(self) -> None:
        self.tensor_pre: dict[int, dict[int, Callable[..., Any]]] = {}  # output_nr -> hooks
        self.pre: dict[int, Callable[..., Any]] = {}
        self.post: dict[int, Callable[..., Any]] = {}
        self.retains: dict[int, Any] = {}  # output_nr -> weakref of a tensor that retains its grad
        self.metadata: dict[str, Any] = {}


class _Freed:
    """Marks a node whose saved values were released by a backward pass."""

    __slots__ = ()


FREED = _Freed()


class SavedOutput:
    """An op's own result saved for its backward, kept without a reference back to the node."""

    __slots__ = ("data", "counter", "version", "output_nr")

    def __init__(self, data: np.ndarray, counter: Any, output_nr: int = 0) -> None:
        self.data = data
        self.counter = counter
        self.version = counter[0]
        self.output_nr = output_nr


def version_error(node: Node, shape: tuple[int, ...], saved: int, now: int) -> RuntimeError:
    """The PyTorch-style error for a saved tensor that was changed in place."""
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{node.name()}, tensor of shape {list(shape)}] is at version {now}; expected "
        f"version {saved} instead. Hint: the inplace operation that changed it came after the forward "
        "call that saved it; use an out-of-place version (e.g. x = x * 2 instead of x *= 2) or clone() "
        "the tensor before changing it."
    )


class Node:
    """One step of the backward graph (PyTorch's ``grad_fn`` objects).

    Saved values live in ``_saved`` with, in ``_versions``, what to check them against: None (no
    check), an int (a saved input Tensor's version at save time), the version counter of the node's
    own output (saved at version 0), or a tuple of these for a tuple of saved values.

    Attributes:
        next_functions: one ``(node, input_nr)`` pair per differentiable input; ``(None, 0)`` for an
            input that needs no gradient.
        sequence_nr: creation order; the engine runs later nodes first.
    """

    __slots__ = ("next_functions", "sequence_nr", "_saved", "_versions", "_shapes", "_hooks", "__weakref__")
    _name = "Node"
    _n_outputs = 1

    def __init__(self) -> None:
        self.next_functions: tuple[tuple[Node | None, int], ...] = ()
        self.sequence_nr = next_sequence_nr()
        self._saved: Any = ()
        self._versions: tuple[Any, ...] = ()
        self._shapes: tuple[Any, ...] = ()
        self._hooks: _NodeHooks | None = None

    def name(self) -> str:
        """The node's class name, e.g. ``"MulBackward0"``."""
        return self._name

    @property
    def metadata(self) -> dict[str, Any]:
        """A free-form dict that travels with the node."""
        return self._hook_set().metadata

    def __repr__(self) -> str:
        return f"<{self._name} object at {id(self):#x}>"

    # ----- hooks --------------------------------------------------------------------------------
    def _hook_set(self) -> _NodeHooks:
        if self._hooks is None:
            self._hooks = _NodeHooks()
        return self._hooks

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Run ``fn(grad_inputs, grad_outputs)`` after this node; a non-None result replaces grad_inputs."""
        return add_hook(self._hook_set().post, fn)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Run ``fn(grad_outputs)`` before this node; a non-None result replaces grad_outputs."""
        return add_hook(self._hook_set().pre, fn)

    def _register_tensor_prehook(self, output_nr: int, fn: Callable[..., Any]) -> RemovableHandle:
        return add_hook(self._hook_set().tensor_pre.setdefault(output_nr, {}), fn)

    # ----- running ------------------------------------------------------------------------------
    def apply(self, grad_outputs: list[Any], create_graph: bool) -> tuple[Any, ...]:
        """Map the gradients of this node's outputs to those of its inputs (one per edge)."""
        raise NotImplementedError(f"{self._name} does not implement apply")

    def release(self) -> None:
        """Free the saved values; a later backward through this node raises a clear error."""
        if self._saved != ():
            self._saved = FREED

    def unpack_saved(self, as_tensors: bool) -> list[Any]:
        """Saved values, checked against their versions: Tensors if ``as_tensors`` else arrays."""
        saved = self._saved
        if saved is FREED:
            raise RuntimeError(FREED_MESSAGE)
        values = []
        for value, version in zip(saved, self._versions):
            if version is None:
                values.append(value)
            elif type(version) is list:  # this node's own output, saved at version 0 with its counter
                if version[0]:
                    raise version_error(self, value.shape, 0, version[0])
                values.append(_own_output(value, self, version) if as_tensors else value)
            else:
                values.append(self._unpack(value, version, as_tensors))
        return values

    def _unpack(self, value: Any, version: Any, as_tensors: bool) -> Any:
        if type(version) is tuple:
            return tuple([v if ver is None else self._unpack(v, ver, as_tensors)
                          for v, ver in zip(value, version)])
        if type(value) is SavedOutput:
            now = value.counter[0]
            if now != version:
                raise version_error(self, value.data.shape, version, now)
            if not as_tensors:
                return value.data
            from funcgrad.tensor import Tensor

            return Tensor._from_node(value.data, self, value.output_nr, value.counter)
        now = value._version_counter[0]
        if now != version:
            raise version_error(self, value.data.shape, version, now)
        return value if as_tensors else value.data


def _own_output(data: np.ndarray, node: Node, counter: list[int]) -> Tensor:
    from funcgrad.tensor import Tensor

    return Tensor._from_node(data, node, 0, counter)


def saved_version(value: Any) -> Any:
    """The version to check a saved value against: an int for a Tensor or saved output, a tuple for a
    tuple holding some, None for anything else."""
    if type(value) is SavedOutput:
        return value.version
    if type(value) is tuple:
        versions = tuple([saved_version(v) for v in value])
        return versions if any(v is not None for v in versions) else None
    counter = getattr(value, "_version_counter", None)
    return None if counter is None else counter[0]


class AccumulateGrad(Node):
    """The sink of a leaf tensor that requires grad: adds arriving gradients to ``variable.grad``."""

    __slots__ = ("variable",)
    _name = "AccumulateGrad"

    def __init__(self, variable: Tensor) -> None:
        super().__init__()
        # created lazily, possibly after its consumers: as a sink it simply runs last
        self.sequence_nr = -1
        self.variable = variable

    def apply(self, grad_outputs: list[Any], create_graph: bool) -> tuple[Any, ...]:
        from funcgrad.tensor import Tensor

        var = self.variable
        extra = var._extra
        grad = grad_outputs[0]
        grad_outputs[0] = None  # the engine's list lets go of the buffer, so _owned can take it over
        if extra is not None and extra.hooks:
            grad = self.hooked(grad, create_graph)
        current = var.grad
        if current is None:
            if create_graph:
                var.grad = grad if type(grad) is Tensor else Tensor(grad)
            else:
                var.grad = Tensor(_owned(_as_array(grad), var.data.dtype))
        elif create_graph or current.requires_grad:
            var.grad = current + grad
        else:
            np.add(current.data, _as_array(grad), out=current.data, casting="unsafe")
        for hook in list(extra.post_acc_hooks.values()) if extra is not None and extra.post_acc_hooks else ():
            hook(var)
        return ()

    def hooked(self, grad: Any, create_graph: bool) -> Any:
        """``grad`` after the leaf's tensor hooks, any of which may replace it."""
        extra = self.variable._extra
        for hook in list(extra.hooks.values()) if extra is not None and extra.hooks else ():
            result = hook(_as_tensor(grad))
            if result is not None:
                grad = result if create_graph else _as_array(result)
        return grad


def _as_tensor(value: Any) -> Tensor:
    from funcgrad.tensor import Tensor

    return value if type(value) is Tensor else Tensor(value)


def _as_array(value: Any) -> np.ndarray:
    from funcgrad.tensor import Tensor

    if isinstance(value, Tensor):
        return value.data
    return value if type(value) is np.ndarray else np.asarray(value)


def _calibrate_refcount() -> int:
    """The reference count ``_owned`` sees for a buffer that only its caller's local variable holds."""
    def probe(grad: np.ndarray) -> int:
        return sys.getrefcount(grad)

    def caller() -> int:
        grad = np.empty(1)
        return probe(grad)

    return caller()


_ALONE = _calibrate_refcount()


def _owned(grad: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Return ``grad`` itself when nobody else can see it, else a fresh copy (PyTorch's buffer stealing)."""
    if (grad.base is None and grad.flags.writeable and grad.flags.c_contiguous and grad.dtype == dtype
            and sys.getrefcount(grad) <= _ALONE):
        return grad
    return np.array(grad, dtype=dtype, copy=True)
