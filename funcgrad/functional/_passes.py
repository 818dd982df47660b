"""The two passes every transform is built from: a reverse pass and a forward-mode pass.

``reverse_pass`` runs the function with its differentiated leaves tracked for reverse mode and
``pull`` sends cotangents (one, or a batch of them in one pass) back; ``push_pass`` runs it once under
forward mode with a tangent (or a batch of tangents) per leaf.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.autograd import forward_ad
from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.grad_mode import enable_grad
from funcgrad.core.graph import AccumulateGrad, next_sequence_nr
from funcgrad.core.tangents import current, tangent_of, tangents_of
from funcgrad.core.tensor import Tensor
from funcgrad.functional._argnums import Call
from funcgrad.functional._core import grad_or_none, zeros_for
from funcgrad.ops import alias

__all__ = ["Traced", "reverse_pass", "pull", "push_pass", "inside_transform", "as_transform", "tracked",
           "depends_beyond"]


class Traced:
    """How an outer transform traces a call's inputs: ``graph`` (some require grad: results keep their graph
    and are recorded), ``tangents`` (some carry an outer level's tangents: results keep theirs, which flow
    without recording). True when either: the results are then returned attached, not detached."""

    __slots__ = ("graph", "tangents")

    def __init__(self, inputs: Sequence[Any]) -> None:
        self.graph = any(isinstance(x, Tensor) and x.requires_grad for x in inputs)
        self.tangents = any(tangents_of(x) for x in inputs)

    def __bool__(self) -> bool:
        return self.graph or self.tangents


class _TransformDepth(threading.local):
    """How many ``funcgrad.func`` transforms are running their function in this thread."""

    depth = 0


_DEPTH = _TransformDepth()


def inside_transform() -> bool:
    """Whether this thread is inside the function of a ``funcgrad.func`` transform (grad, jacrev, jacfwd...)."""
    return _DEPTH.depth > 0


class _Transforming:
    """A context in which this thread runs the function of a transform (``inside_transform``)."""

    __slots__ = ()

    def __enter__(self) -> None:
        _DEPTH.depth += 1

    def __exit__(self, *exc_info: object) -> None:
        _DEPTH.depth -= 1


_TRANSFORMING = _Transforming()  # (a class, not a generator context: a microsecond less per transform call)


def as_transform() -> _Transforming:
    """A context in which this thread runs a function as a transform's (``inside_transform``): a transform called
    within keeps its results attached where they depend on what the function closes over (the nested reverse mode
    of ``nth_derivative`` differentiates through them)."""
    return _TRANSFORMING


def tracked(x: Tensor) -> Tensor:
    """A new Tensor object for ``x`` that requires grad, keeping ``x``'s history and tangent. With neither, a
    detached leaf: an alias would be a view of ``x``, which does not require grad, so writing into a view of it
    would change ``x`` behind the leaf's back (its history not rewritten: a wrong derivative) instead of raising
    torch's error for a view of a leaf."""
    if not x.requires_grad and not tangents_of(x):
        if DISPATCH.active:  # a layer (jet) may carry a series for it, which the leaf would drop
            DISPATCH.note_converted(x, "made the constant leaf of an inner transform (funcgrad.func's grad, jacrev, "
                                       "vjp...: Taylor mode does not run through their backward passes)")
        return x.detach().requires_grad_()
    y = alias(x)
    return y if y.requires_grad else y.requires_grad_()


def _may_be_traced(call: Call) -> bool:
    """Whether values an outer trace follows may reach ``call``'s outputs other than through its differentiated
    inputs (a closed-over Tensor, an argument not differentiated): inside another transform's function, or
    when the caller passed Tensors (plain autograd may trace what the function closes over)."""
    return inside_transform() or not call.numpy_out


def _reaches_beyond(outs: Sequence[Tensor], xs: Sequence[Tensor], since: int) -> bool:
    """Whether the graph of ``outs`` leads anywhere but to the leaves ``xs``: to a node recorded before the
    sequence number ``since`` (an outer graph), or to another leaf or sink (a Tensor requiring grad that the
    function closed over or took beside ``xs``). Only the nodes the call recorded are walked."""
    own = {id(x) for x in xs}
    stack = []
    for out in outs:
        if out.requires_grad:
            if out.grad_fn is None:
                if id(out) not in own:
                    return True
            else:
                stack.append(out.grad_fn)
    seen = set(stack)
    while stack:
        node = stack.pop()
        if node.__class__ is AccumulateGrad:
            if id(node.variable) not in own:
                return True
            continue
        edges = node._edges
        if node.sequence_nr < since or not edges:
            return True
        for edge in edges:
            nxt = edge[0]
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def depends_beyond(outs: Sequence[Tensor], xs: Sequence[Tensor], since: int) -> bool:
    """Whether ``outs``, computed from the leaves ``xs`` after the sequence number ``since``, also depend on a value
    an outer trace follows: a graph beyond ``xs`` (``_reaches_beyond``), or a tangent at a level ``xs`` lack."""
    levels = {level for x in xs for level in tangents_of(x)}
    return any(level not in levels for out in outs for level in tangents_of(out)) or _reaches_beyond(outs, xs, since)


def reverse_pass(call: Call) -> tuple[list[Tensor], list[Tensor], Traced]:
    """Run ``call`` for reverse mode: ``(inputs, outputs, traced)``.

    The results stay attached when an outer transform traces the inputs, or what the function closed over
    or took beside them (``Traced``); the backward pass is recorded (``pull(create_graph=traced.graph)``)
    only for an outer reverse-mode transform: tangents flow through an unrecorded one (its rules run on
    Tensors under forward mode), so forward-over-reverse records the function once, not its backward pass too.
    """
    keep = Traced([x for x, made in zip(call.inputs, call.made) if not made])  # (only a caller's Tensor is traced)
    with enable_grad(), _TRANSFORMING:  # (a Tensor the call made from an array is its own: no alias needed)
        xs = [x.requires_grad_() if made else tracked(x) for x, made in zip(call.inputs, call.made)]
        since = next_sequence_nr()
        outs = call(xs)
    if not (keep.graph and keep.tangents) and _may_be_traced(call):  # outputs that depend on a traced value the
        # inputs do not carry
        keep.tangents = keep.tangents or any(tangents_of(out) for out in outs)
        keep.graph = keep.graph or _reaches_beyond(outs, xs, since)
    return xs, outs, keep


def pull(outs: Sequence[Tensor], xs: Sequence[Tensor], cts: Sequence[Any], create_graph: bool,
         batch: tuple[int, ...] = ()) -> list[Tensor]:
    """The input cotangents for output cotangents ``cts`` (each with leading ``batch`` dims if any)."""
    with enable_grad():
        grads = grad_or_none(outs, xs, cts, create_graph=create_graph, batched=bool(batch))
    return [g if g is not None else zeros_for(x, batch) for g, x in zip(grads, xs)]


def push_pass(call: Call, tangents: Sequence[Any],
              structured: bool = False) -> tuple[list[Tensor], list[Tensor], Traced]:
    """Run ``call`` under forward mode: ``(outputs, output tangents, traced)``.

    ``tangents`` has one entry per input, of its shape or with one leading batch dimension. The graph
    and the tangents of outer levels are kept when an outer transform traces the inputs; the tangents
    are recorded for reverse mode only when an outer reverse-mode transform traces them. With
    ``structured``, output tangents no transform traces are returned as the pass left them (a batch may
    stay structured, for ``jacobian_blocks`` to make dense as it cuts it), else as ``unpack_dual`` gives them.
    """
    keep = Traced([*call.inputs, *tangents])
    doubt = _may_be_traced(call)  # then tangents are recorded in case a closed-over Tensor requires grad
    batch = tuple(np.shape(tangents[0])[:1]) if np.ndim(tangents[0]) > call.inputs[0].ndim else ()
    with forward_ad.dual_level(record_tangents=keep.graph or doubt), _TRANSFORMING:
        # a Tensor the call made from an array is its own: it carries the tangent itself, no dual view needed
        outs = call([forward_ad.set_tangent(x, t) if made else forward_ad.make_dual(x, t)
                     for x, t, made in zip(call.inputs, tangents, call.made)])
        if doubt:  # outputs that depend on a traced value the inputs and tangents do not carry
            level = current()
            keep.tangents = keep.tangents or any(lvl is not level for out in outs for lvl in tangents_of(out))
            keep.graph = keep.graph or any(out.requires_grad or (tangent_of(out, level) is not None
                                                                 and tangent_of(out, level).requires_grad)
                                           for out in outs)
        if not keep:  # nothing traced: the outputs leave detached (or as arrays), so no primal views are needed
            level = current()
            if DISPATCH.active:  # a layer (jet) may carry a series for them, which constants would drop
                for out in outs:
                    for value in (out, tangent_of(out, level)):
                        DISPATCH.note_converted(value, "returned as a constant by an inner transform (funcgrad.func's"
                                                       " jvp, jacfwd, hessian...: Taylor mode does not run through "
                                                       "them)")
            pairs = [forward_ad.UnpackedDualTensor(out, tangent_of(out, level) if structured
                                                   else forward_ad.unpack_tangent(out)) for out in outs]
        else:
            pairs = [forward_ad.unpack_dual(out) for out in outs]
    return ([p.primal for p in pairs],
            [p.tangent if p.tangent is not None else zeros_for(out, batch) for p, out in zip(pairs, outs)], keep)
