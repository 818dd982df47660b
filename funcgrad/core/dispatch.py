"""The one extension point every op call and every backward node passes: off, it costs a flag check.

A *layer* (the profiler, anomaly mode, forward-mode AD, saved-tensor hooks) wraps op calls and node
runs, and hears of in-place changes. Layers belong to the thread that installs them (``push``, ``pop``),
as grad mode does: a layer observes the ops and nodes its own thread runs, never another thread's.
The innermost layer is called last, right around the plain op or ``Node.apply``.

The hot path reads no thread-local state: ``DISPATCH.active`` is one process-wide flag, True while
any thread has a layer installed. Only then do op functions hand their calls to ``call_op`` (and the
engine its node runs to ``run_node``), which reads this thread's layers once (none: the plain call).
Installing and removing layers take a lock (around the count of all threads' layers that sets
``active``); suspending a layer (``suspended``, once per JVP rule) changes this thread's state only
and takes none.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

__all__ = ["Layer", "DISPATCH", "CONVERTED", "push", "pop", "suspended", "hide", "restore"]

CONVERTED = "read as a plain NumPy array or Python number (np.asarray, .numpy(), float(), .item(), .tolist())"


class Layer:
    """Base class of dispatch layers; override what you need, call ``proceed`` to go on."""

    tensor_gradients = False  # while installed, backward rules run on Tensors (forward AD: tangents flow)

    def op(self, spec: Any, proceed: Callable[[tuple[Any, ...], dict[str, Any]], Any], args: tuple[Any, ...],
           kwargs: dict[str, Any]) -> Any:
        """Around one op call (``spec`` is the op's ``OpSpec``); return its result."""
        return proceed(args, kwargs)

    def node(self, node: Any, proceed: Callable[[list[Any], bool], Any], grads: list[Any],
             as_tensors: bool) -> Any:
        """Around one backward node run; return its input gradients."""
        return proceed(grads, as_tensors)

    def inplace(self, tensor: Any, op: str, args: tuple[Any, ...] = ()) -> None:
        """Told that ``op`` (e.g. ``"mul"`` for ``mul_``) is about to change ``tensor`` in place, with ``args``."""

    def converted(self, tensor: Any, how: str = CONVERTED) -> None:
        """Told that ``tensor`` is about to become a constant, ``how`` (by default read as a plain NumPy array or
        Python number: ``np.asarray(t)``, ``t.numpy()``, ``t.item()``, ``float(t)``, ``t.tolist()``): what the layer
        attaches to it would be lost; it may raise."""


class _ThreadLayers(threading.local):
    """One thread's layers: those installed (outermost first), those suspended, and the ones op calls
    go through (installed and not suspended). Each list is replaced on a change, never changed in place,
    so a reader holding one sees a consistent list."""

    def __init__(self) -> None:
        self.installed: list[Layer] = []
        self.exit = _ThreadExit()  # gives back the thread's count of installed layers when the thread ends
        self.hidden: list[Layer] = []  # suspended layers (a layer suspended twice is here twice)
        self.layers: list[Layer] = []
        self.tensor_gradients = False  # some layer of ``layers`` needs backward rules to run on Tensors
        self.last_hide: tuple[Any, ...] | None = None  # what the last ``hide`` saw and did (see ``hide``)

    def refresh(self) -> None:
        """Recompute ``layers`` and ``tensor_gradients`` after a change of ``installed`` or ``hidden``."""
        hidden = self.hidden
        layers = [layer for layer in self.installed if layer not in hidden] if hidden else self.installed
        self.layers = layers
        tensor_gradients = False
        for layer in layers:  # (a loop: no generator, once per dual level entered or left)
            if layer.tensor_gradients:
                tensor_gradients = True
                break
        self.tensor_gradients = tensor_gradients


class _ThreadExit:
    """Held by a thread's layer state only: when the thread ends with layers still installed (pushed and never
    popped), its state is dropped and this takes them out of the process-wide count, so ``active`` does not
    stay on (every op of every thread would go the slow way) for a thread that is gone."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0  # layers this thread has installed

    def __del__(self) -> None:
        if self.count:
            DISPATCH._forget(self.count)


class _Dispatch:
    """The installed layers: ``active`` for all threads, ``layers`` and ``tensor_gradients`` for this one."""

    __slots__ = ("active", "_local", "_lock", "_installed")

    def __init__(self) -> None:
        self.active = False  # some thread has a layer installed
        self._local = _ThreadLayers()
        self._lock = threading.Lock()
        self._installed = 0  # layers installed, over all threads

    @property
    def layers(self) -> list[Layer]:
        """This thread's layers that op calls go through, outermost first (installed and not suspended; read
        only: change them with ``push``, ``pop`` and ``suspended``)."""
        return self._local.layers

    @property
    def tensor_gradients(self) -> bool:
        """True while one of this thread's layers needs backward rules to run on Tensors."""
        return self._local.tensor_gradients

    def call_op(self, spec: Any, plain: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run an op call through this thread's layers, then ``plain`` (the op without this check)."""
        layers = self._local.layers  # the one thread-local read of the call
        if not layers:  # layers are installed in another thread only, or suspended
            return plain(*args, **kwargs)
        proceed: Callable[..., Any] | None = _PROCEEDS.get(plain)
        if proceed is None:  # one per op (its plain function), made once
            proceed = _PROCEEDS[plain] = partial(_call, plain)
        if len(layers) == 1:
            return layers[0].op(spec, proceed, args, kwargs)
        for layer in reversed(layers):  # chained with partials: no closure refers to itself (no cycle)
            proceed = partial(layer.op, spec, proceed)
        return proceed(args, kwargs)

    def note_inplace(self, tensor: Any, op: str, args: tuple[Any, ...] = ()) -> None:
        """Tell this thread's layers that ``op`` is about to change ``tensor`` in place, with ``args``."""
        for layer in self._local.layers:
            layer.inplace(tensor, op, args)

    def note_converted(self, tensor: Any, how: str = CONVERTED) -> None:
        """Tell this thread's layers that ``tensor`` is about to become a constant, ``how`` (``Layer.converted``)."""
        for layer in self._local.layers:
            layer.converted(tensor, how)

    def run_node(self, node: Any, grads: list[Any], as_tensors: bool) -> Any:
        """Run ``node.apply`` through this thread's layers (those that override ``Layer.node``: the others would
        only pass it on)."""
        proceed: Callable[..., Any] = node.apply
        for layer in reversed(self._local.layers):
            if type(layer).node is not _PASS_NODE:
                proceed = partial(layer.node, node, proceed)
        return proceed(grads, as_tensors)

    def _install(self, layer: Layer, index: int | None) -> None:
        """Insert ``layer`` among this thread's installed layers at ``index`` (None: innermost)."""
        local = self._local
        installed = list(local.installed)
        installed.insert(len(installed) if index is None else index, layer)
        with self._lock:  # the count of all threads' layers, and the flag it sets
            self._installed += 1
            self.active = True
        local.exit.count += 1
        local.installed = installed
        local.refresh()

    def _remove(self, layer: Layer) -> None:
        """Remove ``layer`` from this thread's installed layers."""
        local = self._local
        installed = list(local.installed)
        installed.remove(layer)  # raises (changing nothing) when it is not installed
        self._forget(1)
        local.exit.count -= 1
        local.installed = installed
        local.refresh()

    def _forget(self, count: int) -> None:
        """Take ``count`` layers out of the count of all threads' layers."""
        with self._lock:
            self._installed -= count
            self.active = self._installed > 0


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return fn(*args, **kwargs)


_PROCEEDS: dict[Callable[..., Any], Callable[..., Any]] = {}  # plain op function -> partial(_call, it)
_PASS_NODE = Layer.node  # a layer whose ``node`` is this one does not observe node runs


DISPATCH = _Dispatch()
_LOCAL = DISPATCH._local


def push(layer: Layer, *, outermost: bool = False) -> None:
    """Install ``layer`` in this thread, innermost (or ``outermost``)."""
    DISPATCH._install(layer, 0 if outermost else None)


def pop(layer: Layer) -> None:
    """Remove ``layer`` from this thread."""
    DISPATCH._remove(layer)


def hide(layers: tuple[Layer, ...]) -> tuple[Any, ...] | None:
    """Skip ``layers`` in this thread until ``restore(token)`` with the token returned (None when none of
    them was in effect). The fast form of ``suspended``, once per JVP rule: no lock, nothing shared.

    A forward-mode level hides the same layers from the same state op after op, so the last call's work is
    kept and reused while this thread's lists are the very same objects (they are replaced on every change,
    never changed in place, so the same objects mean the same state)."""
    local = _LOCAL
    view = local.layers
    last = local.last_hide
    if (last is not None and last[0] is view and last[1] is local.hidden and last[2] is local.installed
            and last[3] == layers):
        token = last[4]
        if token is not None:
            local.hidden = token[1]
            local.layers = last[5]
            local.tensor_gradients = last[6]
        return token
    kept: list[Layer] = []
    hidden: list[Layer] = []
    tensor_gradients = False
    for layer in view:
        if layer in layers:
            hidden.append(layer)
        else:
            kept.append(layer)
            tensor_gradients = tensor_gradients or layer.tensor_gradients
    if not hidden:
        local.last_hide = (view, local.hidden, local.installed, layers, None)
        return None
    old = local.hidden, view, local.tensor_gradients
    local.hidden = old[0] + hidden
    local.layers = kept
    local.tensor_gradients = tensor_gradients
    token = local.installed, local.hidden, hidden, old
    local.last_hide = (view, old[0], local.installed, layers, token, kept, tensor_gradients)
    return token


def restore(token: tuple[Any, ...] | None) -> None:
    """Undo ``hide``: its layers are in effect again (those still installed)."""
    if token is None:
        return
    local = _LOCAL
    installed, hidden_after, hidden, old = token
    if local.installed is installed and local.hidden is hidden_after:  # nothing changed meanwhile: the old state
        local.hidden, local.layers, local.tensor_gradients = old
        return
    remaining = list(local.hidden)  # a layer was installed, removed or suspended meanwhile: recompute
    for layer in hidden:
        remaining.remove(layer)
    local.hidden = remaining
    local.refresh()


class suspended:
    """Context manager: ``layers`` are skipped (in this thread) inside, so the op calls they make for their
    own work (a forward-mode layer computing a tangent) do not come back to them. Cheap (no lock, nothing
    shared changes); layers installed or removed inside keep their effect on exit."""

    __slots__ = ("layers", "token")

    def __init__(self, *layers: Layer) -> None:
        self.layers = layers
        self.token: tuple[Any, ...] | None = None

    def __enter__(self) -> None:
        self.token = hide(self.layers)

    def __exit__(self, *exc: object) -> None:
        restore(self.token)
