"""The one extension point every op call and every backward node passes: off, it costs a flag check.

A *layer* (the profiler, anomaly mode, forward-mode AD) wraps op calls and node runs, and hears of
in-place changes. Layers are
pushed with ``push`` and popped with ``pop``; while any is installed, ``DISPATCH.active`` is True and
op functions hand their calls to ``call_op``, the engine hands node runs to ``run_node``. The
innermost layer is called last, right around the plain op or ``Node.apply``.
"""
from __future__ import annotations

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


class _Dispatch:
    """The installed layers, outermost first."""

    __slots__ = ("active", "layers", "tensor_gradients")

    def __init__(self) -> None:
        self.active = False
        self.layers: list[Layer] = []
        self.tensor_gradients = False  # some installed layer needs backward rules to run on Tensors

    def call_op(self, spec: Any, plain: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run an op call through every layer, then ``plain`` (the op without this check)."""
        proceed: Callable[..., Any] = partial(_call, plain)
        for layer in reversed(self.layers):  # chained with partials: no closure refers to itself (no cycle)
            proceed = partial(layer.op, spec, proceed)
        return proceed(args, kwargs)

    def note_inplace(self, tensor: Any, op: str) -> None:
        """Tell every layer that ``op`` is about to change ``tensor`` in place."""
        for layer in self.layers:
            layer.inplace(tensor, op)

    def run_node(self, node: Any, grads: list[Any], as_tensors: bool) -> Any:
        """Run ``node.apply`` through every layer."""
        proceed: Callable[..., Any] = node.apply
        for layer in reversed(self.layers):
            proceed = partial(layer.node, node, proceed)
        return proceed(grads, as_tensors)


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return fn(*args, **kwargs)


DISPATCH = _Dispatch()


def push(layer: Layer) -> None:
    """Install ``layer`` innermost."""
    DISPATCH.layers.append(layer)
    _refresh()


def pop(layer: Layer) -> None:
    """Remove ``layer``."""
    DISPATCH.layers.remove(layer)
    _refresh()


class suspended:
    """Context manager: ``layer`` is uninstalled inside, so the op calls it makes for its own work (a
    forward-mode layer computing a tangent) run plainly instead of coming back to it."""

    __slots__ = ("layer", "index")

    def __init__(self, layer: Layer) -> None:
        self.layer = layer
        self.index = 0

    def __enter__(self) -> None:
        layers = DISPATCH.layers
        if len(layers) == 1:  # the usual case: switching dispatch off is enough
            DISPATCH.active = DISPATCH.tensor_gradients = False
            return
        self.index = layers.index(self.layer)
        pop(self.layer)

    def __exit__(self, *exc: object) -> None:
        if DISPATCH.layers != [self.layer]:
            DISPATCH.layers.insert(self.index, self.layer)
        _refresh()


def _refresh() -> None:
    DISPATCH.active = bool(DISPATCH.layers)
    DISPATCH.tensor_gradients = any(lay.tensor_gradients for lay in DISPATCH.layers)
