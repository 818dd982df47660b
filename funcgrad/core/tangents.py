"""Forward-mode state: the active dual levels and the tangent slot of each Tensor.

A level is a dispatch layer (``DualLevel``; the op layer's subclass computes the tangents of op
outputs) that remembers which tensors it gave a tangent, so leaving it drops them all. A tangent lives
in the tensor's ``_extra.tangent`` slot.
"""
from __future__ import annotations

import weakref
from typing import Any

from funcgrad.core import dispatch
from funcgrad.core.tensor import Tensor

__all__ = ["DualLevel", "LEVELS", "current", "tangent_of", "carry_tangent", "has_tangent", "primal_only"]


class DualLevel(dispatch.Layer):
    """One active dual level. Backward passes run their rules on Tensors meanwhile (recording nothing
    unless ``create_graph``), so gradients computed from values that carry tangents carry theirs."""

    tensor_gradients = True

    def __init__(self) -> None:
        self.duals: list[weakref.ref[Tensor]] = []  # tensors given a tangent at this level
        self.quiet = 0  # > 0 while ops compute primal values only (make_dual, unpack_dual, a Function's forward)

    def attach(self, tensor: Tensor, tangent: Any) -> None:
        """Give ``tensor`` its tangent at this level."""
        tensor._get_extra().tangent = tangent if isinstance(tangent, Tensor) else Tensor(tangent)
        self.duals.append(weakref.ref(tensor))


LEVELS: list[DualLevel] = []  # the active levels, innermost last


def current() -> DualLevel:
    """The innermost active level; raises when none is."""
    if not LEVELS:
        raise RuntimeError("make_dual/unpack_dual need an active forward AD level: use `with dual_level():`")
    return LEVELS[-1]


def tangent_of(value: Any) -> Tensor | None:
    """The tangent ``value`` carries, or None."""
    if isinstance(value, Tensor) and value._extra is not None:
        return value._extra.tangent
    return None


def has_tangent(*values: Any) -> bool:
    """True when a dual level is active and one of ``values`` (or of a tuple among them) carries a tangent."""
    return bool(LEVELS) and any(tangent_of(v) is not None for a in values
                                for v in (a if isinstance(a, tuple) else (a,)))


def carry_tangent(source: Tensor, target: Tensor) -> None:
    """Give ``target`` ``source``'s tangent, if any (a copy an in-place op computes from, or a saved output
    a backward unpacks)."""
    tangent = tangent_of(source)
    if tangent is not None:
        LEVELS[-1].attach(target, tangent)


class primal_only:
    """Context manager: ops inside it compute values only, no tangents (a Function's forward and jvp)."""

    def __enter__(self) -> None:
        if LEVELS:
            LEVELS[-1].quiet += 1

    def __exit__(self, *exc: object) -> None:
        if LEVELS:
            LEVELS[-1].quiet -= 1
