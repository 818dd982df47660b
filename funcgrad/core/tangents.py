"""Forward-mode state: the active dual levels (per thread) and the tangents each Tensor carries.

A level is a dispatch layer (``DualLevel``; the op layer's subclass computes the tangents of op
outputs) that remembers which tensors it gave a tangent, so leaving it drops them all. Levels nest, as
in JAX's and functorch's forward mode: a tensor carries one tangent per level (``_extra.tangents``,
keyed by level), and a level computes its tangents with every level entered after it set aside, while
the levels entered before it see that work: so the tangent an inner level computes carries the outer
levels' tangents (``jvp(jvp(f))``, ``jacfwd(jacfwd(f))``).
"""
from __future__ import annotations

import threading
import weakref
from typing import Any

from funcgrad.core import dispatch
from funcgrad.core.tensor import Tensor

__all__ = ["DualLevel", "levels", "enter", "leave", "current", "tangent_of", "tangents_of", "carry_tangent",
           "has_tangent", "primal_only"]


class DualLevel(dispatch.Layer):
    """One active dual level. Backward passes run their rules on Tensors meanwhile (recording nothing
    unless ``create_graph``), so gradients computed from values that carry tangents carry theirs."""

    tensor_gradients = True

    def __init__(self, depth: int, record: bool = True) -> None:
        self.depth = depth  # its index among this thread's levels (0: the outermost)
        # whether the tangents are recorded for reverse mode (in grad mode, as torch's); False for a transform
        # whose results no one differentiates in reverse (e.g. functional.hvp without create_graph)
        self.record = record
        self.duals: list[weakref.ref[Tensor]] = []  # tensors given a tangent at this level
        self.quiet = 0  # > 0 while ops compute primal values only (make_dual, unpack_dual, a Function's forward)
        self.later: tuple[DualLevel, ...] = ()  # the levels entered after it (kept by enter/leave; no self: no cycle)

    def attach(self, tensor: Tensor, tangent: Any) -> None:
        """Give ``tensor`` its tangent at this level."""
        extra = tensor._extra or tensor._get_extra()
        if not isinstance(tangent, Tensor):
            tangent = Tensor._wrap(tangent)
        if extra.tangents is None:
            extra.tangents = {self: tangent}
        else:
            extra.tangents[self] = tangent
        self.duals.append(weakref.ref(tensor))

    def drop(self) -> None:
        """Take this level's tangent from every tensor it gave one."""
        for ref in self.duals:
            tensor = ref()
            if tensor is not None and tensor._extra is not None and tensor._extra.tangents:
                tensor._extra.tangents.pop(self, None)
        self.duals.clear()

    def and_later(self) -> tuple[DualLevel, ...]:
        """This level and every level of this thread entered after it: set aside while it computes tangents."""
        return (self, *self.later)


class _ThreadLevels(threading.local):
    def __init__(self) -> None:
        self.levels: list[DualLevel] = []


_LOCAL = _ThreadLevels()


def levels() -> list[DualLevel]:
    """This thread's active levels, innermost (latest) last (each thread has its own, as grad mode; read only:
    change them with ``enter`` and ``leave``)."""
    return _LOCAL.levels


def enter(level: DualLevel) -> None:
    """Make ``level`` this thread's innermost level."""
    _LOCAL.levels.append(level)
    _link(_LOCAL.levels)


def leave() -> DualLevel:
    """Remove this thread's innermost level and return it."""
    level = _LOCAL.levels.pop()
    _link(_LOCAL.levels)
    return level


def _link(active: list[DualLevel]) -> None:
    for level in active:
        level.later = tuple(active[level.depth + 1:])


def current() -> DualLevel:
    """The innermost active level; raises when none is."""
    active = _LOCAL.levels
    if not active:
        raise RuntimeError("make_dual/unpack_dual need an active forward AD level: use `with dual_level():`")
    return active[-1]


def tangent_of(value: Any, level: DualLevel) -> Tensor | None:
    """The tangent ``value`` carries at ``level``, or None."""
    if isinstance(value, Tensor) and value._extra is not None and value._extra.tangents:
        return value._extra.tangents.get(level)
    return None


def tangents_of(value: Any) -> dict[DualLevel, Tensor]:
    """Every tangent ``value`` carries, by level (empty for anything else)."""
    if isinstance(value, Tensor) and value._extra is not None and value._extra.tangents:
        return value._extra.tangents
    return {}


def has_tangent(*values: Any) -> bool:
    """True when a dual level is active and one of ``values`` (or of a tuple among them) carries a tangent."""
    return bool(_LOCAL.levels) and any(tangents_of(v) for a in values for v in (a if isinstance(a, tuple) else (a,)))


def carry_tangent(source: Tensor, target: Tensor) -> None:
    """Give ``target`` ``source``'s tangents, at their levels (a copy an in-place op computes from, or a saved
    output a backward unpacks)."""
    carried = tangents_of(source)
    if not carried or target is source:
        return
    extra = target._extra or target._get_extra()
    if extra.tangents is None:
        extra.tangents = dict(carried)
    else:
        extra.tangents.update(carried)
    held = weakref.ref(target)  # one weak reference for every level it now has a tangent at
    for level in carried:
        level.duals.append(held)


class primal_only:
    """Context manager: ops inside it compute values only, at no level (a Function's forward and jvp)."""

    def __enter__(self) -> None:
        self.levels = tuple(_LOCAL.levels)
        for level in self.levels:
            level.quiet += 1

    def __exit__(self, *exc: object) -> None:
        for level in self.levels:
            level.quiet -= 1
