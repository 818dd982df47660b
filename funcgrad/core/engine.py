"""The backward engine: runs recorded nodes from the roots to the leaves, summing gradients.

Every edge points from a node to one created before it, so running the nodes that received a
gradient by decreasing ``sequence_nr`` (a heap; a chain's next node skips it) visits every consumer
before its producers: no dependency counting and no recursion (graphs of 100k+ nodes are fine).
The engine knows no op; it only calls ``Node.apply``, reduces broadcast gradients to each input's
shape, and runs hooks.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from heapq import heapify, heappop, heappush
from operator import attrgetter
from typing import Any

import numpy as np

from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.grad_mode import STATE
from funcgrad.core.graph import (
    FREED,
    SHAPES,
    AccumulateGrad,
    Node,
    checked_hook_result,
    checked_hook_results,
    live_sinks,
)
from funcgrad.core.tensor import Tensor

__all__ = ["run_backward", "register_gradient_space"]


def _reachable(roots: Sequence[Node]) -> list[Node]:
    """Every node reachable from ``roots``, latest-created first."""
    seen = set(roots)
    stack = list(seen)
    while stack:
        for edge in stack.pop()._edges:
            nxt = edge[0]
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return sorted(seen, key=_SEQUENCE_NR, reverse=True)


_SEQUENCE_NR = attrgetter("sequence_nr")


def _on_path(order: list[Node], targets: set[Node]) -> set[Node]:
    """The nodes of ``order`` that lead to a target: only these need to run."""
    reach = set(targets)  # the nodes that lead to a target, and the targets (one lookup per edge)
    add = reach.add
    for node in reversed(order):  # producers first, so children are decided before parents
        for edge in node._edges:
            if edge[0] in reach:
                add(node)
                break
    # a target runs only when it leads to another target (all decided before any is taken out)
    reach.difference_update([t for t in targets if not any(edge[0] in reach for edge in t._edges)])
    return reach


class _GradientSpace:
    """What the engine needs to know about gradients and cannot know itself, since it knows no op:
    how to sum a broadcast gradient down to its input's shape and how to cast it to the input's dtype
    (HIPS autograd's vector spaces). The op layer registers both at import."""

    __slots__ = ("sum_to", "cast", "stack")

    def __init__(self) -> None:
        self.sum_to: Callable[[Any, tuple[int, ...], int], Any] = _unregistered
        self.cast: Callable[[Any, np.dtype], Any] = _unregistered
        self.stack: Callable[[list[Any]], Any] = _unregistered


def _unregistered(*args: Any) -> Any:
    raise RuntimeError("no gradient space is registered: import funcgrad (its op layer registers it)")


_SPACE = _GradientSpace()


def register_gradient_space(sum_to: Callable[[Any, tuple[int, ...], int], Any],
                            cast: Callable[[Any, np.dtype], Any], stack: Callable[[list[Any]], Any]) -> None:
    """Register ``sum_to(grad, shape, batch)`` (sum a gradient of a broadcast shape down to ``shape``,
    keeping ``batch`` leading dims), ``cast(grad, dtype)`` and ``stack(grads)`` (gradients stacked along a new
    leading dim); each is recorded when the gradients are Tensors."""
    _SPACE.sum_to = sum_to
    _SPACE.cast = cast
    _SPACE.stack = stack


_SHAPES_KEPT = 4096  # distinct shapes graph.SHAPES holds before a backward pass clears it


def run_backward(roots: Sequence[Any], root_grads: Sequence[Any], *, inputs: Sequence[Any] | None = None,
                 retain_graph: bool = False, create_graph: bool = False, accumulate: bool = True,
                 batch: int = 0) -> list[Any] | None:
    """Send ``root_grads`` back from ``roots`` (Tensors) through the graph.

    Nodes run latest-created first, taken from a heap of the nodes that have received a gradient: a node
    is only ever visited once something reached it (branches whose gradients are all None are never
    walked), and plain ``backward`` needs no search of the graph beforehand.

    Args:
        roots, root_grads: output tensors and the gradients to start from (arrays, or Tensors when
            ``create_graph``).
        inputs: if given, only nodes that lead to these tensors run, and their gradients are returned
            (``accumulate=False``) or added to their ``.grad`` (``accumulate=True``).
        retain_graph: keep saved values so the graph can be used again.
        create_graph: run the rules on Tensors in grad mode so the backward pass is itself recorded.
            Rules also run on Tensors (recording nothing) while a dispatch layer asks for it
            (``DISPATCH.tensor_gradients``: forward AD, so gradients carry tangents).
        batch: the number of leading batch dimensions every gradient carries.

    Returns:
        With ``inputs`` and ``accumulate=False``, one gradient (or None) per input; else None.
    """
    if len(SHAPES) > _SHAPES_KEPT:  # a program meeting ever new shapes: start the shared set over
        SHAPES.clear()
    pending = _GradBuffer()
    for root, grad in zip(roots, root_grads):
        node, nr = root._edge()
        pending.add(node, nr, grad)
    slots = pending.slots

    captures: dict[Node, list[tuple[int, int]]] = {}  # node -> (output_nr, index in inputs) to capture
    run: set[Node] | None = None
    if inputs is not None:
        for i, t in enumerate(inputs):
            node, nr = t._edge()
            captures.setdefault(node, []).append((nr, i))
        targets = set(captures)
        if live_sinks() != len([n for n in targets if not n._edges]):  # a sink that is no target: find the paths
            run = _on_path(_reachable(list(slots)), targets)
            if accumulate:
                run.update(n for n in targets if type(n) is AccumulateGrad)
            allowed = run | targets  # the nodes a gradient is worth sending to
            for node in [n for n in slots if n not in allowed]:
                del slots[node]
        # else every live sink is a target, and every path ends at a sink: every node reached leads to a target
    captured: list[Any] = [None] * (len(inputs) if inputs is not None else 0)

    heap = [(-node.sequence_nr, node) for node in slots]
    heapify(heap)
    owned = pending.owned
    prev = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    tensors = create_graph or DISPATCH.tensor_gradients  # whether rules see Tensors (else arrays)
    follow: Node | None = None  # the next node to run, when known without the heap (see below)
    try:
        while follow is not None or heap:
            if follow is not None:
                node, follow = follow, None
            else:
                node = heappop(heap)[1]
            grads = slots.pop(node)  # popped now so its memory goes as soon as it is used
            if owned:
                pending.forget(node, len(grads))
            hooks = node._hooks
            if hooks is not None:
                grads = (_by_row(partial(_run_pre_hooks, node, as_tensors=tensors), grads, batch) if batch else
                         _run_pre_hooks(node, grads, tensors))
            if captures:
                wanted = captures.get(node)
                if wanted:
                    _capture(node, grads, wanted, captured, tensors, hooked=not accumulate, batch=batch)
                if run is not None:
                    if node not in run:
                        continue
                elif not node._edges and (not accumulate or type(node) is not AccumulateGrad):
                    continue  # a sink (a target): only backward(inputs=...) adds into a leaf's .grad
            grads_in = DISPATCH.run_node(node, grads, tensors) if DISPATCH.active else node.apply(grads, tensors)
            if hooks is not None and hooks.post:
                grads_in = (_run_post_hooks(node, grads_in, grads, tensors) if not batch else
                            _by_row(partial(_post_hooks_on_row, node, len(grads_in), tensors), [*grads_in, *grads],
                                    batch))
            if not retain_graph and (saved := node._saved) and saved.__class__ is tuple:
                node._saved = FREED  # (Node.release, inline: KeptSaved values stay)
            for (nxt, nr, shape, dtype), g in zip(node._edges, grads_in):
                if nxt is None or g is None or (run is not None and nxt not in allowed):
                    continue
                array = g.data if tensors and type(g) is Tensor else g  # (a Tensor's properties are calls)
                if (array.shape[batch:] if batch else array.shape) != shape:
                    g = _SPACE.sum_to(g, shape, batch)
                if array.dtype is not dtype and array.dtype != dtype:  # (the same dtype object, nearly always)
                    g = _SPACE.cast(g, dtype)
                if nxt not in slots:
                    if nxt._n_outputs == 1:
                        slots[nxt] = [g]
                        if follow is None:
                            follow = nxt
                        else:
                            heappush(heap, (-nxt.sequence_nr, nxt))
                        continue
                    heappush(heap, (-nxt.sequence_nr, nxt))
                pending.add(nxt, nr, g)
            grads_in = g = None  # hold no gradient here, so AccumulateGrad may take a buffer over
            # A chain's next node runs at once, without the heap, when it is the latest created of those waiting:
            # nodes still to receive a gradient were all created before it (they get theirs from waiting nodes).
            if follow is not None and heap and heap[0][0] < -follow.sequence_nr:
                heappush(heap, (-follow.sequence_nr, follow))
                follow = None
    finally:
        STATE.grad_enabled = prev
    if inputs is None:
        return None
    if accumulate:
        for t, g in zip(inputs, captured):
            if g is not None and t.grad_fn is not None:
                _accumulate_into(t, g, tensors)
        return None
    return captured


def _capture(node: Node, grads: list[Any], wanted: list[tuple[int, int]], captured: list[Any], tensors: bool,
             hooked: bool, batch: int) -> None:
    """Store the gradients of ``node``'s outputs that ``grad`` returns (``wanted``: output_nr, result index);
    a leaf's hooks see (and may replace) its gradient first, once per output (per row of a batch), as torch."""
    seen: dict[int, Any] = {}
    for nr, i in wanted:
        if nr not in seen:
            g = grads[nr]
            if hooked and type(node) is AccumulateGrad and g is not None:
                g = (_by_row(lambda rows: [node.hooked(rows[0], tensors)], [g], batch)[0]
                     if batch and node.has_hooks() else node.hooked(g, tensors))
            seen[nr] = g
        captured[i] = seen[nr]


def _by_row(run: Callable[[list[Any]], Sequence[Any]], grads: Sequence[Any], batch: int) -> list[Any]:
    """``run`` (hooks, written for one gradient per slot) on each row of gradients with ``batch`` leading batch dims
    (``is_grads_batched``: a row per vector of the batch, as torch's vmap gives its hooks), the results stacked. A
    slot that some rows leave None and others not gets zeros in those rows."""
    if not batch:
        return list(run(list(grads)))
    n = next(g.shape[0] for g in grads if g is not None)
    rows = [_by_row(run, [None if g is None else g[r] for g in grads], batch - 1) for r in range(n)]
    stacked: list[Any] = []
    for column in zip(*rows):
        given = [g for g in column if g is not None]
        if not given:
            stacked.append(None)
            continue
        zero = np.zeros(np.shape(given[0]), _as_array(given[0]).dtype)
        stacked.append(_SPACE.stack([zero if g is None else g for g in column]))
    return stacked


class _GradBuffer:
    """Gradients waiting for their node: one slot per node output. A sum the engine allocated itself
    is remembered as owned, so further gradients for that slot are added into it in place."""

    __slots__ = ("slots", "owned")

    def __init__(self) -> None:
        self.slots: dict[Node, list[Any]] = {}
        self.owned: set[tuple[Node, int]] = set()

    def add(self, node: Node, nr: int, grad: Any) -> None:
        slots = self.slots.get(node)
        if slots is None:
            slots = self.slots[node] = [None] * node._n_outputs
        current = slots[nr]
        if current is None:
            slots[nr] = grad
        elif (node, nr) in self.owned and type(current) is type(grad) is np.ndarray and current.shape == grad.shape:
            np.add(current, grad, out=current, casting="same_kind")
        else:
            slots[nr] = current + grad
            if type(slots[nr]) is np.ndarray:
                self.owned.add((node, nr))

    def forget(self, node: Node, n_outputs: int) -> None:
        """Drop the ownership marks of a node whose gradients were taken."""
        for nr in range(n_outputs):
            self.owned.discard((node, nr))


def _run_pre_hooks(node: Node, grads: list[Any], as_tensors: bool) -> list[Any]:
    hooks = node._hooks
    grads = list(grads)
    for nr, fns in hooks.tensor_pre.items():  # type: ignore[union-attr]
        for fn in list(fns.values()):
            if grads[nr] is not None:
                result = fn(_as_tensor(grads[nr]))
                if result is not None:
                    result = checked_hook_result(fn, grads[nr], result)
                    grads[nr] = result if as_tensors else result.data
    for nr, ref in hooks.retains.items():  # type: ignore[union-attr]
        tensor = ref()
        if tensor is not None and grads[nr] is not None:
            g = grads[nr]
            if tensor.grad is None:
                tensor.grad = g.clone() if type(g) is Tensor else Tensor(np.array(_as_array(g), copy=True))  # (torch's)
            else:
                tensor.grad = tensor.grad + g
    for fn in list(hooks.pre.values()):  # type: ignore[union-attr]
        result = fn(tuple(_as_tensor_or_none(g) for g in grads))
        if result is not None:
            result = checked_hook_results(fn, grads, result)
            grads = [r if as_tensors or r is None else r.data for r in result]
    return grads


def _run_post_hooks(node: Node, grads_in: Any, grads_out: list[Any], tensors: bool) -> Any:
    for fn in list(node._hooks.post.values()):  # type: ignore[union-attr]
        result = fn(tuple(_as_tensor_or_none(g) for g in grads_in),
                    tuple(_as_tensor_or_none(g) for g in grads_out))
        if result is not None:
            result = checked_hook_results(fn, grads_in, result)
            grads_in = [r if r is None or tensors else r.data for r in result]
    return grads_in


def _post_hooks_on_row(node: Node, n_in: int, tensors: bool, row: list[Any]) -> Any:
    """``_run_post_hooks`` on one row of a batched pass: ``row`` holds the node's input gradients, then its outputs'."""
    return _run_post_hooks(node, row[:n_in], row[n_in:], tensors)


def _accumulate_into(tensor: Any, grad: Any, as_tensors: bool) -> None:
    """``backward(inputs=...)`` on a non-leaf: add the captured gradient to its ``.grad``."""
    if tensor.grad is None:
        tensor.grad = _as_tensor(grad).clone() if as_tensors else _as_tensor(np.array(_as_array(grad), copy=True))
    else:
        tensor.grad = tensor.grad + grad


def _as_tensor(value: Any) -> Any:
    return value if isinstance(value, Tensor) else Tensor(value)


def _as_tensor_or_none(value: Any) -> Any:
    return None if value is None else _as_tensor(value)


def _as_array(value: Any) -> np.ndarray:
    return value.data if isinstance(value, Tensor) else np.asarray(value)
