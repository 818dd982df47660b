"""The backward graph: ``Node`` (one recorded backward step), ``AccumulateGrad`` (the sink of a leaf),
saved values with their version checks, and hook handles.

A node knows its edges and how to turn output gradients into input gradients; it knows nothing
about the order in which the engine runs nodes.
"""
from __future__ import annotations

import gc
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from funcgrad.core import dispatch
from funcgrad.core.buffers import owned
from funcgrad.core.tangents import carry_tangent
from funcgrad.core.tensor import Tensor

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "saved_tensors_hooks", "NO_EDGE", "SHAPES", "edge_to",
           "AT_VERSION_0", "UNCHECKED_PAIR", "unchecked", "Sink", "live_sinks", "long_recording", "KeptSaved",
           "keep_saved"]

_sequence = itertools.count()
next_sequence_nr = _sequence.__next__
NO_EDGE: tuple[Any, ...] = (None, 0, None, None)  # the edge of an input that needs no gradient
# Shared ``_versions`` of the commonest nodes (one object less per node for the garbage collector):
AT_VERSION_0 = (0,)  # one Tensor saved at version 0
_UNCHECKED: dict[int, tuple[None, ...]] = {}


def unchecked(n: int) -> tuple[None, ...]:
    """The shared ``_versions`` of a node whose ``n`` saved values need no check (numbers, shapes, None): one object
    per length, so a backward recognizes it by identity and reads the values as saved."""
    return _UNCHECKED.setdefault(n, (None,) * n)


UNCHECKED_PAIR = unchecked(2)  # two values saved that need no check (numbers, None)


# One tuple per distinct shape, shared by every edge that names it: a graph of many nodes then holds no shape
# tuple of its own per edge, which the garbage collector would count and visit (one entry per shape seen).
SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {}


def edge_to(tensor: Tensor) -> tuple[Any, ...]:
    """The edge to ``tensor`` (which requires grad): ``(node, input_nr, shape, dtype)``."""
    fn = tensor.grad_fn
    data = tensor.data
    shape = data.shape
    shape = SHAPES.setdefault(shape, shape)
    if fn is not None:
        return (fn, tensor.output_nr, shape, data.dtype)
    return (tensor._accumulator(), 0, shape, data.dtype)
next_sink_nr = itertools.count(-1, -1).__next__

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


class KeptSaved(tuple):  # type: ignore[type-arg]
    """The saved values of a node that backward passes leave in place (retain_graph or not): a node of a local
    derivative that another node keeps for later ``create_graph`` passes (``ops/nodes.py``), which the graphs of
    several passes then share. Freeing it after one of them would break the others, whose torch counterparts
    each have a node of their own."""

    __slots__ = ()


def keep_saved(result: Tensor, since: int) -> None:
    """Make the nodes of ``result``'s history created from sequence number ``since`` on keep their saved values."""
    stack = [result.grad_fn]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if node is None or node.sequence_nr < since:
            continue
        saved = node._saved
        if saved.__class__ is tuple and saved:
            node._saved = KeptSaved(saved)
        for edge in node._edges:
            push(edge[0])


class SavedOutput:
    """An op's own result saved for its backward, kept without a reference back to the node.

    ``dual``, set inside a forward-mode level, is a detached Tensor carrying the output's tangent: the
    Tensor a backward unpacks gets that tangent too (forward-over-reverse), still without a cycle.
    """

    __slots__ = ("data", "counter", "version", "output_nr", "dual")

    def __init__(self, data: np.ndarray, counter: Any, output_nr: int = 0, dual: Any = None) -> None:
        self.data = data
        self.counter = counter
        self.version = counter[0]
        self.output_nr = output_nr
        self.dual = dual


InplaceHint = Callable[[list[int], int], str]
_INPLACE_HINTS: list[InplaceHint] = []


def register_inplace_hint(hint: InplaceHint) -> None:
    """Let ``hint(counter, saved_version)`` add to the version error what it knows about the in-place
    changes since (anomaly mode registers one that names the op and where it ran)."""
    _INPLACE_HINTS.append(hint)


def version_error(node: Node, shape: tuple[int, ...], saved: int, counter: list[int]) -> RuntimeError:
    """The PyTorch-style error for a saved tensor that was changed in place (``counter``: its version counter)."""
    now = counter[0]
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{node.name()}, tensor of shape {list(shape)}] is at version {now}; expected "
        f"version {saved} instead. Hint: the inplace operation that changed it came after the forward "
        "call that saved it; use an out-of-place version (e.g. x = x * 2 instead of x *= 2) or clone() "
        "the tensor before changing it." + "".join(hint(counter, saved) for hint in _INPLACE_HINTS)
    )


class Node:
    """One step of the backward graph (PyTorch's ``grad_fn`` objects).

    Saved values live in ``_saved`` with, in ``_versions``, what to check them against: None (no
    check), an int (a saved input Tensor's version at save time), the version counter of the node's
    own output (saved at version 0), or a tuple of these for a tuple of saved values.

    Its edges, one per input, are ``_edges``: ``(node, input_nr, shape, dtype)``, where a gradient for that
    input goes and the shape and dtype it must have (``NO_EDGE`` for an input that needs no gradient); one
    tuple per edge, built once when the op is recorded. ``next_functions`` shows them as PyTorch does.

    Attributes:
        sequence_nr: creation order; the engine runs later nodes first.
    """

    __slots__ = ("_edges", "sequence_nr", "_saved", "_versions", "_hooks", "__weakref__")
    _name = "Node"
    _n_outputs = 1

    def __init__(self) -> None:
        self._edges: tuple[tuple[Any, ...], ...] = ()
        self.sequence_nr = next_sequence_nr()
        self._saved: Any = ()
        self._versions: tuple[Any, ...] = ()
        self._hooks: _NodeHooks | None = None

    def name(self) -> str:
        """The node's class name, e.g. ``"MulBackward0"``."""
        return self._name

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """One ``(node, input_nr)`` pair per input; ``(None, 0)`` for an input that needs no gradient."""
        return tuple([(edge[0], edge[1]) for edge in self._edges])

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
    def apply(self, grad_outputs: list[Any], as_tensors: bool) -> Sequence[Any]:
        """Map the gradients of this node's outputs to those of its inputs (one per edge).

        ``as_tensors``: the gradients are Tensors and the rules run on Tensors (under ``create_graph``, or
        while a dispatch layer asks for tensor gradients); else they are arrays (the fast path).
        """
        raise NotImplementedError(f"{self._name} does not implement apply")

    def release(self) -> None:
        """Free the saved values (unless they are ``KeptSaved``); a later backward through this node raises a clear
        error."""
        if self._saved.__class__ is tuple and self._saved:
            self._saved = FREED

    def unpack_saved(self, as_tensors: bool) -> list[Any]:
        """Saved values, checked against their versions: Tensors if ``as_tensors`` else arrays."""
        saved = self._saved
        if saved is FREED:
            raise RuntimeError(FREED_MESSAGE)
        values: list[Any] = []
        append = values.append
        for value, version in zip(saved, self._versions):
            if version is None:
                append(value)
            elif version.__class__ is int and value.__class__ is Tensor:  # a saved Tensor: the common case
                if value._version_counter[0] != version:
                    raise version_error(self, value.data.shape, version, value._version_counter)
                append(value if as_tensors else value.data)
            elif version.__class__ is list:  # this node's own output, saved at version 0 with its counter
                if version[0]:
                    raise version_error(self, value.shape, 0, version)
                append(_own_output(value, self, version) if as_tensors else value)
            else:
                append(self._unpack(value, version, as_tensors))
        return values

    def _unpack(self, value: Any, version: Any, as_tensors: bool) -> Any:
        if version is PACKED:
            return value.restore(self, as_tensors)
        if type(version) is tuple:
            return tuple([v if ver is None else self._unpack(v, ver, as_tensors)
                          for v, ver in zip(value, version)])
        if type(value) is SavedOutput:
            if value.counter[0] != version:
                raise version_error(self, value.data.shape, version, value.counter)
            if not as_tensors:
                return value.data
            if value.data.dtype.kind not in "fc":  # an integer output (indices) has no history, but its versions
                indices = Tensor._wrap(value.data)
                indices._version_counter = value.counter  # (an in-place change of it is seen by a later check)
                return indices
            unpacked = Tensor._from_node(value.data, self, value.output_nr, value.counter)
            if value.dual is not None:
                carry_tangent(value.dual, unpacked)
            return unpacked
        if value._version_counter[0] != version:
            raise version_error(self, value.data.shape, version, value._version_counter)
        return value if as_tensors else value.data


def _own_output(data: np.ndarray, node: Node, counter: list[int]) -> Tensor:
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


_ACCUMULATING = threading.Lock()  # backward passes in several threads may add into one leaf's .grad


_LIVE_SINKS: list[None] = []  # an entry per live Sink (append and pop are atomic: exact with threads, no weakrefs)


class Sink(Node):
    """A node without edges: a leaf's AccumulateGrad, an invalid view's history. Each path of a graph ends at one,
    so when every live sink is a target of a backward pass, every node reached leads to a target (see engine)."""

    __slots__ = ()

    def __init__(self, sequence_nr: int) -> None:
        # (Node's fields set here: a leaf's first use in a graph makes one, so this is on the recording path)
        self._edges = self._saved = self._versions = ()
        self._hooks = None
        self.sequence_nr = sequence_nr
        _LIVE_SINKS.append(None)

    def __del__(self, _forget: Callable[[], None] = _LIVE_SINKS.pop) -> None:
        _forget()


def live_sinks() -> int:
    """How many sinks are alive (in any thread's graphs)."""
    return len(_LIVE_SINKS)


class AccumulateGrad(Sink):
    """The sink of a leaf tensor that requires grad: adds arriving gradients to ``variable.grad``, under a
    lock (as torch: backward passes into a shared leaf from several threads add up exactly)."""

    __slots__ = ("variable",)
    _name = "AccumulateGrad"

    def __init__(self, variable: Tensor) -> None:
        # created lazily, possibly after its consumers: as a sink it simply runs last (numbered -1, -2, ...:
        # distinct, so the engine's heap never compares two nodes)
        super().__init__(next_sink_nr())
        self.variable = variable

    def apply(self, grad_outputs: list[Any], as_tensors: bool) -> Sequence[Any]:
        var = self.variable
        extra = var._extra
        grad = grad_outputs[0]
        grad_outputs[0] = None  # the engine's list lets go of the buffer, so _owned can take it over
        if extra is not None and extra.hooks:
            grad = self.hooked(grad, as_tensors)
        if var._requires_grad:  # (a leaf frozen after the forward, by requires_grad_(False), gets no .grad: torch)
            with _ACCUMULATING:
                current = var._grad
                if current is None:
                    if as_tensors:
                        # a copy, as torch's: a gradient may be another's too (add's rule passes one on to both
                        # inputs), and an in-place change of one .grad (clipping) must not reach the other
                        var._grad = grad.clone() if type(grad) is Tensor else Tensor(grad)
                    else:
                        var._grad = Tensor(owned(_as_array(grad), var.data.dtype))
                elif as_tensors or current.requires_grad:
                    var._grad = current + grad
                else:
                    np.add(current.data, _as_array(grad), out=current.data, casting="unsafe")
        for hook in list(extra.post_acc_hooks.values()) if extra is not None and extra.post_acc_hooks else ():
            hook(var)
        return ()

    def has_hooks(self) -> bool:
        """Whether the leaf has tensor hooks (``register_hook``)."""
        extra = self.variable._extra
        return extra is not None and bool(extra.hooks)

    def hooked(self, grad: Any, as_tensors: bool) -> Any:
        """``grad`` after the leaf's tensor hooks, any of which may replace it."""
        extra = self.variable._extra
        for hook in list(extra.hooks.values()) if extra is not None and extra.hooks else ():
            result = hook(_as_tensor(grad))
            if result is not None:
                result = checked_hook_result(hook, grad, result)
                grad = result if as_tensors else result.data
        return grad


def checked_hook_result(hook: Callable[..., Any], value: Any, result: Any) -> Any:
    """``result``, which ``hook`` returned to replace the gradient ``value``: a Tensor of value's shape and
    dtype, else PyTorch's error naming the hook."""
    if not isinstance(result, Tensor):
        kind = type(result)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"expected Variable, but hook returned '{name}'; a gradient hook returns a Tensor or None")
    hook_name = getattr(hook, "__name__", type(hook).__name__)
    if result.shape != value.shape:
        raise RuntimeError(f"hook '{hook_name}' has changed the size of value (was {list(value.shape)} got "
                           f"{list(result.shape)})")
    if result.dtype != value.dtype:
        raise RuntimeError(f"hook '{hook_name}' has changed the type of value (was {value.dtype} got {result.dtype})")
    return result


def checked_hook_results(hook: Callable[..., Any], values: Any, results: Any) -> Any:
    """``results`` of a node hook replacing the gradients ``values``: one per value, each checked."""
    if len(results) != len(values):
        hook_name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(f"hook '{hook_name}' has returned an incorrect number of values (got {len(results)}, "
                           f"but expected {len(values)})")
    return [r if r is None or v is None else checked_hook_result(hook, v, r) for v, r in zip(values, results)]


def _as_tensor(value: Any) -> Tensor:
    return value if type(value) is Tensor else Tensor(value)


def _as_array(value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        return value.data
    return value if type(value) is np.ndarray else np.asarray(value)


# ----- saved-tensor hooks ----------------------------------------------------------------------------
PACKED = object()  # the _versions entry of a value stored through saved_tensors_hooks


class PackedSaved:
    """A saved tensor as ``pack_hook`` returned it, with what ``restore`` needs to give it its history back."""

    __slots__ = ("packed", "unpack", "grad_fn", "output_nr", "leaf")

    def __init__(self, packed: Any, unpack: Callable[[Any], Any], grad_fn: Node | None, output_nr: int,
                 leaf: Tensor | None) -> None:
        self.packed = packed
        self.unpack = unpack
        self.grad_fn = grad_fn      # the history of a saved non-leaf input
        self.output_nr = output_nr  # with grad_fn None: the saving node's own output nr, or -1 (no history)
        self.leaf = leaf            # a saved leaf that requires grad: second derivatives must reach it

    def restore(self, node: Node, as_tensors: bool) -> Any:
        """The tensor ``unpack_hook`` gives back: its array, or a Tensor with the original's history."""
        tensor = self.unpack(self.packed)
        if not isinstance(tensor, Tensor):
            raise TypeError(f"saved_tensors_hooks: unpack_hook must return a Tensor, got {type(tensor).__name__}")
        if not as_tensors:
            return tensor.data
        if self.leaf is not None:
            return self.leaf
        if self.grad_fn is not None:
            return Tensor._from_node(tensor.data, self.grad_fn, self.output_nr, [0])
        if self.output_nr >= 0:
            return Tensor._from_node(tensor.data, node, self.output_nr, [0])
        return tensor


def _pack(value: Any, version: Any, pack: Callable[[Any], Any], unpack: Callable[[Any], Any]) -> Any:
    """``value`` stored through the hooks (inputs, outputs); None when it is not a saved tensor."""
    if type(version) is list:  # the node's own output, kept as its array
        return PackedSaved(pack(Tensor._wrap(value)), unpack, None, 0, None)
    if type(value) is SavedOutput:
        return PackedSaved(pack(Tensor._wrap(value.data)), unpack, None, value.output_nr, None)
    if isinstance(value, Tensor):
        leaf = value if value.grad_fn is None and value._requires_grad else None
        return PackedSaved(pack(value), unpack, value.grad_fn, value.output_nr if value.grad_fn else -1, leaf)
    return None


def pack_saved(node: Node) -> None:
    """Store the tensors ``node`` saved through the innermost ``saved_tensors_hooks`` of this thread."""
    hooks = _SAVED_HOOKS.stack
    if not hooks or node._saved is FREED or not node._saved:
        return
    pack, unpack = hooks[-1]
    saved, versions = list(node._saved), list(node._versions)
    for i, (value, version) in enumerate(zip(saved, versions)):
        if version is None or version is PACKED or type(version) is tuple:
            continue
        packed = _pack(value, version, pack, unpack)
        if packed is not None:
            saved[i], versions[i] = packed, PACKED
    node._saved, node._versions = tuple(saved), tuple(versions)


class _SavedHooksState(threading.local):
    stack: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]]

    def __init__(self) -> None:
        self.stack = []


_SAVED_HOOKS = _SavedHooksState()


class _SavedHooksLayer(dispatch.Layer):
    """Packs what every recorded op of the installing thread saves."""

    def op(self, spec: Any, proceed: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = proceed(args, kwargs)
        first = out[0] if isinstance(out, tuple) and out else out
        node = getattr(first, "grad_fn", None)
        if node is not None:
            pack_saved(node)
        return out


class saved_tensors_hooks:
    """Context manager: tensors that operations save for backward go through ``pack_hook`` when saved and
    ``unpack_hook`` when backward needs them (e.g. to keep them compressed or on disk), as torch.

    Args:
        pack_hook: called with each saved Tensor; whatever it returns is stored instead.
        unpack_hook: called with that, must return a Tensor with the original's values.

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.autograd.graph import saved_tensors_hooks
        >>> x = fg.tensor([1.0, 2.0], requires_grad=True)
        >>> with saved_tensors_hooks(lambda t: t.data.astype("float32"), lambda a: fg.tensor(a, dtype=float)):
        ...     y = (x * x).sum()
        >>> y.backward()
        >>> x.grad
        tensor([2., 4.])
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.hooks = (pack_hook, unpack_hook)
        self._layer: _SavedHooksLayer | None = None

    def __enter__(self) -> saved_tensors_hooks:
        _SAVED_HOOKS.stack.append(self.hooks)
        self._layer = _SavedHooksLayer()
        dispatch.push(self._layer)
        return self

    def __exit__(self, *exc: object) -> None:
        _SAVED_HOOKS.stack.pop()
        dispatch.pop(self._layer)  # type: ignore[arg-type]


@contextmanager
def long_recording(threshold: int = 100_000) -> Iterator[None]:
    """Record and run a long graph with fewer garbage collections: inside, Python's collector starts a
    collection of its youngest generation after ``threshold`` new objects instead of 700.

    Each recorded op makes a few objects the collector tracks (its node, its result, their edges), and the
    collections of older generations walk the whole recording each time: a chain of 20,000 ops spends about a
    tenth of its time there (``python -m benchmarks.per_op_profile --workload deep-chain``). Graphs hold no
    reference cycles, so nothing waits for the collector to be freed. The threshold is the process's
    (``gc.set_threshold``, as set by any thread) and is put back on exit.

    Example:
        >>> import funcgrad as fg
        >>> x = fg.tensor([1.0, 2.0], requires_grad=True)
        >>> with fg.autograd.graph.long_recording():
        ...     y = x
        ...     for _ in range(1000):
        ...         y = y * 0.999 + 0.001
        ...     y.sum().backward()
    """
    before = gc.get_threshold()
    gc.set_threshold(threshold, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
