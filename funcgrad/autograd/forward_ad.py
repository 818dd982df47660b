"""Forward-mode AD, as ``torch.autograd.forward_ad``: dual tensors whose tangents flow through every op.

While a ``dual_level`` is active, the op layer's forward layer (``funcgrad.ops.jvp``) gives the output
of every op whose inputs carry tangents the tangent the op table's JVP rule computes. A tangent may
carry one leading batch dimension (a batch of directions, pushed in one pass).

Levels nest (as in JAX and functorch; ``torch.autograd.forward_ad`` itself allows one): a level entered
inside another is the innermost, ``make_dual``/``unpack_dual`` act on the innermost unless given
``level=``, and the tangents an inner level computes carry the outer levels' tangents, so derivatives of
any order come out of nested ``jvp``/``jacfwd`` (``funcgrad.core.tangents``). Levels belong to the thread
that entered them.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from funcgrad import ops
from funcgrad.core import dispatch
from funcgrad.core.graph import FREED, SavedOutput
from funcgrad.core.structured import Structured
from funcgrad.core.tangents import DualLevel, current, enter, leave, levels, primal_only, tangent_of, tangents_of
from funcgrad.core.tensor import Tensor
from funcgrad.ops.jvp import ForwardLayer, dense, saved_dual, zeros_like

__all__ = ["dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor", "enter_dual_level", "exit_dual_level",
           "primal_only", "set_tangent", "unpack_tangent"]


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view without tangent) and the tangent (or None)."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level(*, record_tangents: bool = True) -> int:
    """Start a dual level, inside the active ones if any; returns its index (0 for the outermost).

    ``record_tangents=False`` (a funcgrad extension) computes the tangents without recording them for
    reverse mode even in grad mode: for a caller that never differentiates them in reverse (``hvp``
    without ``create_graph``), it saves the recording."""
    layer = ForwardLayer(len(levels()), record_tangents)
    enter(layer)
    dispatch.push(layer, outermost=True)  # sees each op first: its rule then finds out's outer tangents set
    return layer.depth


def exit_dual_level(*, level: int | None = None) -> None:
    """End the innermost dual level (``level``, if given, must be its index): its tangents are dropped."""
    active = levels()
    if not active:
        raise RuntimeError("exit_dual_level called outside a dual level")
    if level is not None and level != len(active) - 1:
        raise RuntimeError(f"exit_dual_level(level={level}): the innermost active level is {len(active) - 1}; "
                           "levels end in the reverse order of their start")
    layer = leave()
    dispatch.pop(layer)
    layer.drop()


def _level(level: int | None) -> DualLevel:
    if level is None:
        return current()
    active = levels()
    if not 0 <= level < len(active):
        raise RuntimeError(f"no active dual level {level}: the active levels are 0 to {len(active) - 1}")
    return active[level]


class dual_level:
    """Context manager for forward-mode AD: tangents set by ``make_dual`` inside it flow through ops.

    ``record_tangents=False`` (a funcgrad extension): see ``enter_dual_level``.

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.autograd import forward_ad as fwAD
        >>> x = fg.tensor([1.0, 2.0])
        >>> with fwAD.dual_level():
        ...     y = fg.sin(fwAD.make_dual(x, fg.ones(2))) * 2
        ...     fwAD.unpack_dual(y).tangent
        tensor([ 1.08060461, -0.83229367])
    """

    def __init__(self, *, record_tangents: bool = True) -> None:
        self.record_tangents = record_tangents

    def __enter__(self) -> int:
        return enter_dual_level(record_tangents=self.record_tangents)

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()


def make_dual(tensor: Tensor, tangent: Any, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` (same shape, or one extra leading batch dimension).

    Args:
        tensor: the primal (floating dtype); its reverse-mode history is kept.
        tangent: the direction, a Tensor or array of ``tensor``'s shape, or ``(batch, *shape)``.
        level: the index of the level to attach it at (default: the innermost).
    """
    layer = _level(level)
    tangent = _checked_tangent(tensor, tangent)
    layer.quiet += 1
    try:
        dual = ops.alias(tensor)
    finally:
        layer.quiet -= 1
    layer.attach(dual, tangent)
    return dual


def set_tangent(tensor: Tensor, tangent: Any, *, level: int | None = None) -> Tensor:
    """``make_dual`` without the view: ``tensor`` itself gets the tangent (a funcgrad extension, for a Tensor
    the caller made and no one else holds, such as the detached inputs of ``functional.hvp``). Returns it."""
    _level(level).attach(tensor, _checked_tangent(tensor, tangent))
    return tensor


def _checked_tangent(tensor: Tensor, tangent: Any) -> Tensor:
    """``tangent`` as a Tensor of ``tensor``'s dtype (at least) and shape (or with a leading batch dimension)."""
    if not isinstance(tangent, Tensor):  # a structured batch (the identity of a Jacobian) stays structured
        tangent = Tensor._wrap(tangent) if isinstance(tangent, Structured) else Tensor(np.asarray(tangent))
    if tensor.dtype.kind not in "fc" or tangent.dtype.kind not in "fc":
        raise ValueError(f"make_dual expects floating point primal and tangent, got {tensor.dtype} and "
                         f"{tangent.dtype}")
    wider = tangent.dtype if tangent.dtype == tensor.dtype else np.result_type(tensor.dtype, tangent.dtype)
    if wider != tangent.dtype and type(tangent.data) is np.ndarray:
        tangent = tangent.to(wider)  # a float32 tangent of a float64 primal computes in float64, as torch
    if tangent.shape != tensor.shape and tangent.shape[1:] != tensor.shape:
        raise ValueError(f"Trying to set a forward gradient that has a different size than that of the original "
                         f"Tensor: tangent shape {tangent.shape} vs primal shape {tensor.shape} (a batch of "
                         f"tangents may add one leading dimension)")
    return tangent


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """Split a dual tensor into ``(primal, tangent)`` at ``level`` (default: the innermost); the tangent is None
    when it has none there. The primal keeps the tangents of the other levels."""
    if not levels():
        return UnpackedDualTensor(tensor, None)
    layer = _level(level)
    layer.quiet += 1
    try:
        primal = ops.alias(tensor)
    finally:
        layer.quiet -= 1
    return UnpackedDualTensor(primal, unpack_tangent(tensor, level=level))


def unpack_tangent(tensor: Tensor, *, level: int | None = None) -> Tensor | None:
    """``unpack_dual(tensor).tangent`` without making the primal view (a funcgrad extension)."""
    if not levels():
        return None
    layer = _level(level)
    tangent = tangent_of(tensor, layer)
    if tangent is None or not isinstance(tangent.data, Structured):
        return tangent
    layer.quiet += 1
    try:
        return dense(tangent)
    finally:
        layer.quiet -= 1


# ----- custom Functions (funcgrad.autograd.Function) ------------------------------------------------
def function_tangents(inputs: tuple[Any, ...]) -> tuple[DualLevel, list[Any]] | None:
    """For ``Function.apply``: the level the inputs' tangents are at, and one tangent per input (zeros for a
    Tensor without one, None for anything else); None when no input has a tangent. A Function's ``jvp``
    serves one level: inputs with tangents at several (nested levels) raise."""
    if not levels():
        return None
    carried = [tangents_of(a) for a in inputs]
    at = {level for tangents in carried for level in tangents}
    if not at:
        return None
    if len(at) > 1 or any(tangents_of(t) for tangents in carried for t in tangents.values()):
        raise NotImplementedError("a custom Function's inputs carry tangents of nested dual levels; its jvp "
                                  "computes the tangents of one level: differentiate it at one level at a time, or "
                                  "write it with funcgrad ops (whose rules nest)")
    (level,) = at
    with primal_only():
        return level, [(dense(tangent_of(a, level)) if tangent_of(a, level) is not None else zeros_like(a))
                       if isinstance(a, Tensor) else None for a in inputs]


def tangent_batch(tangents: list[Any], inputs: tuple[Any, ...]) -> int | None:
    """The number of directions in a Function's input tangents: a leading dim the primals lack (``jacfwd``, the
    checks), or None for one direction."""
    return next((t.shape[0] for t, a in zip(tangents, inputs) if isinstance(a, Tensor) and t.ndim > a.ndim), None)


def function_jvp(jvp: Callable[..., Any], ctx: Any, tangents: list[Any], inputs: tuple[Any, ...],
                 n_outputs: int, batch: int | None) -> Any:
    """Call a Function's ``jvp`` on the inputs' tangents (under ``primal_only``).

    A jvp is written for one direction (torch's contract), so a ``batch`` of tangents is pushed one direction at a
    time, the results stacked: handed the batch, a jvp that reduces its tangent (``x * t.sum()``) would mix the
    directions, and its result can still have the batch's shape (``t * s + x * t.sum()``), so no test of the result
    tells a right batched call from a wrong one. torch calls a jvp once per forward, so every direction after the
    first gets a copy of ``ctx`` as forward left it: what a jvp writes on ``ctx`` (a cached result) reaches no
    other direction.
    """
    with primal_only():
        if batch is None:
            return jvp(ctx, *tangents)
        as_forward_left = copy.copy(ctx)
        directions = [jvp(ctx if b == 0 else copy.copy(as_forward_left),
                          *[t[b] if isinstance(a, Tensor) and t.ndim > a.ndim else t for t, a in zip(tangents, inputs)])
                      for b in range(batch)]
    if n_outputs == 1 and not isinstance(directions[0], tuple | list):
        return ops.stack(directions)
    return tuple(None if all(d[i] is None for d in directions) else
                 ops.stack([d[i] if d[i] is not None else np.zeros_like(next(e[i] for e in directions
                                                                             if e[i] is not None))
                            for d in directions]) for i in range(n_outputs))


def attach_function_tangents(name: str, tangents: Any, outputs: Any, level: DualLevel, batch: int | None) -> None:
    """Give a Function's outputs the tangents its ``jvp`` returned (one per output, None for none; with ``batch``
    directions, each stacked along a leading dim)."""
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    tangents = tangents if isinstance(tangents, tuple | list) else (tangents,)
    if len(tangents) != len(outs):
        raise RuntimeError(f"{name}.jvp returned {len(tangents)} tangents but forward returned {len(outs)} outputs; "
                           "return one tangent (or None) per output")
    lead = () if batch is None else (batch,)
    for i, (o, t) in enumerate(zip(outs, tangents)):
        if t is None or not isinstance(o, Tensor) or o.dtype.kind not in "fc":
            continue
        t = t if isinstance(t, Tensor) else Tensor(np.asarray(t))
        if t.shape != lead + o.shape:
            raise RuntimeError(f"{name}.jvp returned a tangent of shape {list(t.shape[len(lead):])} for output {i} "
                               f"of shape {list(o.shape)}; a tangent has its output's shape")
        level.attach(o, t)
    _give_saved_outputs_tangents(outs)


def _give_saved_outputs_tangents(outputs: tuple[Any, ...]) -> None:
    """Outputs a Function saved for its backward get the tangents just attached (for forward-over-reverse)."""
    node = next((o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None), None)
    saved = getattr(node, "_saved", None)
    if not isinstance(saved, tuple) or saved is FREED:  # no node, nothing saved yet, or freed
        return
    node._saved = tuple(saved_dual(outputs[v.output_nr], v.output_nr) if type(v) is SavedOutput and v.dual is None
                        and v.output_nr < len(outputs) and outputs[v.output_nr].grad_fn is node else v for v in saved)
