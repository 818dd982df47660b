"""What both functional styles share below their argument conventions: one pass of each mode.

``grad_or_none`` is ``autograd.grad`` tolerant of outputs that do not depend on the inputs;
``basis`` builds the batched identity seeds of a one-pass Jacobian and ``jacobian_blocks`` cuts
the pass's result into the ``out.shape + in.shape`` blocks. Nothing here knows about pytrees,
argnums or ``strict``.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from funcgrad.autograd import forward_ad, grad
from funcgrad.core.graph import AccumulateGrad
from funcgrad.core.structured import BatchedDiagonal, ScaledStack, Structured, identity_seed
from funcgrad.core.tangents import tangents_of
from funcgrad.core.tensor import Tensor
from funcgrad.ops import stack

Shape = tuple[int, ...]


def grad_or_none(outputs: Sequence[Tensor | None], inputs: Sequence[Tensor], grad_outputs: Sequence[Any],
                 create_graph: bool, batched: bool = False) -> tuple[Tensor | None, ...]:
    """``autograd.grad`` over the outputs that require grad; None for each input none of them reach."""
    kept = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    outs, seeds = zip(*kept)
    if batched and _hooked(outs):
        return _row_by_row(outs, inputs, seeds, create_graph)
    return grad(outs, inputs, seeds, retain_graph=True, create_graph=create_graph, allow_unused=True,
                is_grads_batched=batched)


def _hooked(outputs: Sequence[Tensor]) -> bool:
    """Whether the graph of ``outputs`` has gradient hooks (a tensor's, a node's, a leaf's): a hook is written
    for one gradient, as a Function's backward is, and handed a batch it may mix its rows (``g / norm(g)``)."""
    stack = [out._edge()[0] for out in outputs]
    seen = set(stack)
    while stack:
        node = stack.pop()
        hooks = node._hooks
        if hooks is not None and (hooks.tensor_pre or hooks.pre or hooks.post):
            return True
        if node.__class__ is AccumulateGrad:
            extra = node.variable._extra
            if extra is not None and extra.hooks:
                return True
        for edge in node._edges:
            nxt = edge[0]
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def _row_by_row(outputs: Sequence[Tensor], inputs: Sequence[Tensor], seeds: Sequence[Any],
                create_graph: bool) -> tuple[Tensor | None, ...]:
    """A batched ``grad`` as one backward pass per row of the seeds, stacked: each hook sees one gradient."""
    rows = [grad(outputs, inputs, [seed[b] for seed in seeds], retain_graph=True, create_graph=create_graph,
                 allow_unused=True) for b in range(np.shape(seeds[0])[0])]
    return tuple(None if all(row[i] is None for row in rows) else
                 stack([row[i] if row[i] is not None else zeros_for(x) for row in rows])
                 for i, x in enumerate(inputs))


def zeros_for(ref: Tensor, batch: Shape = ()) -> Tensor:
    """Zeros shaped ``batch + ref.shape``: the derivative of an output that does not depend on ``ref``."""
    return Tensor(np.zeros(batch + ref.shape, ref.dtype))


def tangent(t: Tensor) -> Tensor | None:
    """The forward-mode tangent ``t`` carries at the active dual level, or None."""
    return forward_ad.unpack_tangent(t)


def _numels(shapes: Sequence[Shape]) -> list[int]:
    return [math.prod(s) for s in shapes]


def _starts(sizes: list[int]) -> list[int]:
    return [0, *itertools.accumulate(sizes)]


def basis(shapes: Sequence[Shape], dtype: Any, structured: bool = False) -> list[Any]:
    """The standard basis of the concatenation of ``shapes``, split per shape.

    Entry ``k`` has shape ``(N, *shapes[k])`` with ``N`` the total number of elements: together they
    are the rows of the ``N x N`` identity, built once (a single shape gets a view of it). With
    ``structured``, a single shape gets the identity as a ``BatchedDiagonal``: the seeds of a reverse
    pass or the tangents of a forward pass, kept structured by the ops as long as they can.
    """
    if structured and len(shapes) == 1:
        return [identity_seed(tuple(shapes[0]), dtype)]
    sizes = _numels(shapes)
    eye = np.eye(sum(sizes), dtype=dtype)
    starts = _starts(sizes)
    return [eye[:, s:s + n].reshape((len(eye), *shape)) for s, n, shape in zip(starts, sizes, shapes)]


def jacobian_blocks(batched: Sequence[Tensor], out_shapes: Sequence[Shape], in_shapes: Sequence[Shape],
                    mode: Literal["reverse", "forward"]) -> list[list[Tensor]]:
    """Cut the result of one batched pass into Jacobian blocks ``[i][j]`` of shape ``out_i + in_j``.

    Args:
        batched: reverse mode: one ``(total output size, *in_j)`` gradient per input (a row per output
            element); forward mode: one ``(total input size, *out_i)`` tangent per output.
        out_shapes: the output shapes.
        in_shapes: the input shapes.
        mode: which pass produced ``batched``.
    """
    rows, cols = (out_shapes, in_shapes) if mode == "reverse" else (in_shapes, out_shapes)
    sizes = _numels(rows)
    starts = _starts(sizes)
    cut = [[b[s:s + n] if len(sizes) > 1 else b for s, n in zip(starts, sizes)] for b in batched]  # cut[col][row]
    if mode == "reverse":
        return [[cut[j][i].reshape(out + inp) for j, inp in enumerate(in_shapes)] for i, out in enumerate(out_shapes)]
    # forward: block (n_j, *out_i) -> (n_j, m_i) -> (m_i, n_j) -> out_i + in_j
    return [[_forward_block(cut[i][j], sizes[j], out, inp) for j, inp in enumerate(in_shapes)]
            for i, out in enumerate(out_shapes)]


def _forward_block(block: Tensor, n: int, out: Shape, inp: Shape) -> Tensor:
    """A forward pass's ``(n, *out)`` tangents of one output along one input's ``n`` seeds as the Jacobian block
    ``out + inp``. Without a graph or tangents, an array is transposed as it is (a view) and a structured batch
    (``push_pass(structured=True)``) as it is made dense, in one pass over its values; anything else with ops
    (differentiably, or recorded by ``jit``)."""
    data = block.data
    if not block.requires_grad and not tangents_of(block):  # nothing traced: the arrays themselves
        if type(data) is np.ndarray:
            return Tensor._wrap(data.reshape(n, -1).T.reshape(out + inp))
        if not isinstance(data, BatchedDiagonal | ScaledStack):
            return block.reshape(n, -1).T.reshape(out + inp)  # (an array jit traces: its ops are recorded)
        matrix = np.reshape(data, (n, math.prod(out)))
        dense = matrix.dense_transposed() if isinstance(matrix, Structured) else np.ascontiguousarray(matrix.T)
        return Tensor._wrap(dense.reshape(out + inp))
    return block.reshape(n, -1).T.reshape(out + inp)
