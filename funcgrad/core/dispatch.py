"""The one extension point every op call and every backward node passes: off, it costs a flag check.

A *layer* (the profiler, anomaly mode, forward-mode AD, saved-tensor hooks) wraps op calls and node
runs, and hears of in-place changes. Layers belong to the thread that installs them (``push``, ``pop``),
as grad mode does: a layer observes the ops and nodes its own thread runs, never another thread's.
The innermost layer is called last, right around the plain op or ``Node.apply``.

The hot path reads no thread-local state: ``DISPATCH.active`` is one process-wide flag, True while
any thread has a layer installed. Only then do op functions hand their calls to ``call_op`` (and the
engine its node runs to ``run_node``), which looks up this thread's layers (none: the plain call).
Installing and removing layers hold a lock, so one thread's changes never interleave with another's.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

__all__ = ["Layer", "DISPATCH", "push", "pop", "suspended"]


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

    def inplace(self, tensor: Any, op: str) -> None:
        """Told that ``op`` (e.g. ``"mul"`` for ``mul_``) is about to change ``tensor`` in place."""


class _ThreadLayers(threading.local):
    """One thread's installed layers, outermost first."""

    def __init__(self) -> None:
        self.layers: list[Layer] = []
        self.tensor_gradients = False  # some installed layer needs backward rules to run on Tensors


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
        """This thread's layers, outermost first (read only: change them with ``push`` and ``pop``)."""
        return self._local.layers

    @property
    def tensor_gradients(self) -> bool:
        """True while one of this thread's layers needs backward rules to run on Tensors."""
        return self._local.tensor_gradients

    def call_op(self, spec: Any, plain: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run an op call through this thread's layers, then ``plain`` (the op without this check)."""
        layers = self._local.layers
        if not layers:  # layers are installed in another thread only
            return plain(*args, **kwargs)
        proceed: Callable[..., Any] = partial(_call, plain)
        for layer in reversed(layers):  # chained with partials: no closure refers to itself (no cycle)
            proceed = partial(layer.op, spec, proceed)
        return proceed(args, kwargs)

    def note_inplace(self, tensor: Any, op: str) -> None:
        """Tell this thread's layers that ``op`` is about to change ``tensor`` in place."""
        for layer in self._local.layers:
            layer.inplace(tensor, op)

    def run_node(self, node: Any, grads: list[Any], as_tensors: bool) -> Any:
        """Run ``node.apply`` through this thread's layers."""
        proceed: Callable[..., Any] = node.apply
        for layer in reversed(self._local.layers):
            proceed = partial(layer.node, node, proceed)
        return proceed(grads, as_tensors)

    def _change(self, remove: list[Layer], insert: list[tuple[int, Layer]]) -> None:
        """Remove ``remove`` from this thread's layers, then insert each ``(index, layer)`` (clamped), all under
        the lock, and refresh the flags."""
        local = self._local
        with self._lock:
            for layer in remove:
                local.layers.remove(layer)
            for index, layer in insert:
                local.layers.insert(min(index, len(local.layers)), layer)
            self._installed += len(insert) - len(remove)
            self.active = self._installed > 0
        local.tensor_gradients = any(layer.tensor_gradients for layer in local.layers)


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return fn(*args, **kwargs)


DISPATCH = _Dispatch()


def push(layer: Layer, *, outermost: bool = False) -> None:
    """Install ``layer`` in this thread, innermost (or ``outermost``)."""
    DISPATCH._change([], [(0 if outermost else len(DISPATCH.layers), layer)])


def pop(layer: Layer) -> None:
    """Remove ``layer`` from this thread."""
    DISPATCH._change([layer], [])


class suspended:
    """Context manager: ``layers`` are uninstalled (in this thread) inside, so the op calls they make for
    their own work (a forward-mode layer computing a tangent) do not come back to them; each goes back
    to its place on exit (those not installed on entry are left alone)."""

    __slots__ = ("layers", "places")

    def __init__(self, *layers: Layer) -> None:
        self.layers = layers
        self.places: list[tuple[int, Layer]] = []

    def __enter__(self) -> None:
        installed = DISPATCH.layers
        self.places = [(installed.index(layer), layer) for layer in self.layers if layer in installed]
        DISPATCH._change([layer for _, layer in self.places], [])

    def __exit__(self, *exc: object) -> None:
        DISPATCH._change([], sorted(self.places, key=lambda place: place[0]))
