"""Forward-mode AD, as ``torch.autograd.forward_ad``: dual tensors whose tangents flow through every op.

While a ``dual_level`` is active, the op layer's forward layer (``funcgrad.ops.jvp``) gives the output
of every op whose inputs carry tangents the tangent the op table's JVP rule computes. A tangent may
carry one leading batch dimension (a batch of directions, pushed in one pass).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from funcgrad import ops
from funcgrad.core import dispatch
from funcgrad.core.graph import FREED, SavedOutput
from funcgrad.core.structured import Structured
from funcgrad.core.tangents import LEVELS, current, primal_only
from funcgrad.core.tangents import tangent_of as _tangent
from funcgrad.core.tensor import Tensor
from funcgrad.ops.jvp import ForwardLayer, dense, saved_dual, zeros_like

__all__ = ["dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor", "enter_dual_level", "exit_dual_level",
           "primal_only"]


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view without tangent) and the tangent (or None)."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Start a dual level (only one at a time, as torch); returns its index."""
    if LEVELS:
        raise RuntimeError("Nested forward mode AD is not supported; exit the current dual_level first")
    layer = ForwardLayer()
    LEVELS.append(layer)
    dispatch.push(layer)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """End the dual level: every tangent set inside it is dropped."""
    if not LEVELS:
        raise RuntimeError("exit_dual_level called outside a dual level")
    layer = LEVELS.pop()
    dispatch.pop(layer)
    for ref in layer.duals:
        tensor = ref()
        if tensor is not None and tensor._extra is not None:
            tensor._extra.tangent = None


class dual_level:
    """Context manager for forward-mode AD: tangents set by ``make_dual`` inside it flow through ops.

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.autograd import forward_ad as fwAD
        >>> x = fg.tensor([1.0, 2.0])
        >>> with fwAD.dual_level():
        ...     y = fg.sin(fwAD.make_dual(x, fg.ones(2))) * 2
        ...     fwAD.unpack_dual(y).tangent
        tensor([ 1.08060461, -0.83229367])
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()


def make_dual(tensor: Tensor, tangent: Any, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` (same shape, or one extra leading batch dimension).

    Args:
        tensor: the primal (floating dtype); its reverse-mode history is kept.
        tangent: the direction, a Tensor or array of ``tensor``'s shape, or ``(batch, *shape)``.
    """
    layer = current()
    if not isinstance(tangent, Tensor):  # a structured batch (the identity of a Jacobian) stays structured
        tangent = Tensor._wrap(tangent) if isinstance(tangent, Structured) else Tensor(np.asarray(tangent))
    if tensor.dtype.kind not in "fc" or tangent.dtype.kind not in "fc":
        raise ValueError(f"make_dual expects floating point primal and tangent, got {tensor.dtype} and "
                         f"{tangent.dtype}")
    wider = np.result_type(tensor.dtype, tangent.dtype)
    if wider != tangent.dtype and type(tangent.data) is np.ndarray:
        tangent = tangent.to(wider)  # a float32 tangent of a float64 primal computes in float64, as torch
    if tangent.shape != tensor.shape and tangent.shape[1:] != tensor.shape:
        raise ValueError(f"Trying to set a forward gradient that has a different size than that of the original "
                         f"Tensor: tangent shape {tangent.shape} vs primal shape {tensor.shape} (a batch of "
                         f"tangents may add one leading dimension)")
    layer.quiet += 1
    try:
        dual = ops.alias(tensor)
    finally:
        layer.quiet -= 1
    layer.attach(dual, tangent)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """Split a dual tensor into ``(primal, tangent)``; the tangent is None when it has none."""
    tangent = _tangent(tensor)
    if not LEVELS:
        return UnpackedDualTensor(tensor, None)
    layer = LEVELS[-1]
    layer.quiet += 1
    try:
        primal = ops.alias(tensor)
        tangent = dense(tangent)
    finally:
        layer.quiet -= 1
    return UnpackedDualTensor(primal, tangent)


# ----- custom Functions (funcgrad.autograd.Function) ------------------------------------------------
def function_tangents(inputs: tuple[Any, ...]) -> list[Any] | None:
    """For ``Function.apply``: one tangent per input (zeros for a Tensor without one, None for anything
    else), or None when no dual level is active or no input has a tangent."""
    if not LEVELS or all(_tangent(a) is None for a in inputs):
        return None
    with primal_only():
        return [(dense(_tangent(a)) if _tangent(a) is not None else zeros_like(a)) if isinstance(a, Tensor)
                else None for a in inputs]


def attach_function_tangents(name: str, tangents: Any, outputs: Any) -> None:
    """Give a Function's outputs the tangents its ``jvp`` returned (one per output, None for none)."""
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    tangents = tangents if isinstance(tangents, tuple | list) else (tangents,)
    if len(tangents) != len(outs):
        raise RuntimeError(f"{name}.jvp returned {len(tangents)} tangents but forward returned {len(outs)} outputs; "
                           "return one tangent (or None) per output")
    for i, (o, t) in enumerate(zip(outs, tangents)):
        if t is None or not isinstance(o, Tensor) or o.dtype.kind not in "fc":
            continue
        t = t if isinstance(t, Tensor) else Tensor(np.asarray(t))
        if t.shape != o.shape and t.shape[1:] != o.shape:
            raise RuntimeError(f"{name}.jvp returned a tangent of shape {list(t.shape)} for output {i} of shape "
                               f"{list(o.shape)}; a tangent has its output's shape (or one extra leading batch dim)")
        LEVELS[-1].attach(o, t)
    _give_saved_outputs_tangents(outs)


def _give_saved_outputs_tangents(outputs: tuple[Any, ...]) -> None:
    """Outputs a Function saved for its backward get the tangents just attached (for forward-over-reverse)."""
    node = next((o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None), None)
    saved = getattr(node, "_saved", None)
    if not isinstance(saved, tuple) or saved is FREED:  # no node, nothing saved yet, or freed
        return
    node._saved = tuple(saved_dual(outputs[v.output_nr], v.output_nr) if type(v) is SavedOutput and v.dual is None
                        and v.output_nr < len(outputs) and outputs[v.output_nr].grad_fn is node else v for v in saved)
