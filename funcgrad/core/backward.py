"""``backward`` and ``grad``: argument checking and seeding, each a few lines over ``run_backward``."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from funcgrad.core.buffers import unshared
from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.engine import run_backward
from funcgrad.core.structured import Structured
from funcgrad.core.tensor import Tensor

__all__ = ["backward", "grad", "zero_grads"]

_Tensors = Tensor | Sequence[Tensor]


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, Tensor):
        return (value,)
    return tuple(value)


def _seed_gradients(outputs: tuple[Tensor, ...], grad_outputs: Any, create_graph: bool,
                    batched: bool) -> list[Any]:
    """One starting gradient per output: ones for a scalar output, else the one the caller gave (as a
    Tensor when the pass runs its rules on Tensors)."""
    tensors = create_graph or DISPATCH.tensor_gradients
    if grad_outputs is None:
        if len(outputs) == 1:  # the commonest call, grad(loss, ...): no tuples to build
            return [_ones_seed(outputs[0], 0, tensors)]
        given: tuple[Any, ...] = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor | np.ndarray | Structured | np.generic | float | int):
        given = (grad_outputs,)
    else:
        given = tuple(grad_outputs)
    if len(given) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(given)} entries but there are {len(outputs)} outputs; "
                           "give one gradient (or None) per output")
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, given)):
        if g is None:
            seeds.append(_ones_seed(out, i, tensors))
            continue
        _check_output(out, i)
        g = g.data if isinstance(g, Tensor) and not tensors else g
        if not isinstance(g, Tensor | Structured):
            g = np.asarray(g, dtype=out.dtype)
        expected = out.shape if not batched else tuple(g.shape[:1]) + out.shape
        if tuple(g.shape) != expected:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                               f"output[{i}] has a shape of {out.shape}"
                               + (" (with is_grads_batched=True, a leading batch dimension is expected)"
                                  if batched else ""))
        seeds.append(Tensor._wrap(g) if tensors and not isinstance(g, Tensor) else g)
    return seeds


def _ones_seed(out: Any, i: int, tensors: bool) -> Any:
    """The implicit gradient of output ``i``, a one-element real tensor: a one of its shape and dtype."""
    _check_output(out, i)
    data = out.data
    if data.size != 1:
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs, but output {i} "
                           f"has shape {out.shape}; pass the gradient (e.g. ones_like(output)) "
                           "explicitly")
    if data.dtype.kind == "c":
        raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                           f"{out.dtype}; take .real, .abs() or pass the gradient explicitly")
    if data.ndim:
        g = np.empty(data.shape, data.dtype)  # ones (np.ones is a Python function around these two)
        g.fill(1)
    else:
        g = np.array(1, data.dtype)  # (a 0-d one at half the cost)
    return Tensor._wrap(g) if tensors else g


def _check_output(out: Any, i: int) -> None:
    if not isinstance(out, Tensor):
        raise TypeError(f"outputs[{i}] is a {type(out).__name__}, not a Tensor")
    if not out._requires_grad:
        raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn; "
                           "the output was computed without any input that requires grad, or under no_grad()")


def backward(tensors: _Tensors, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: _Tensors | None = None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves they depend on.

    Args:
        tensors: the outputs to differentiate.
        grad_tensors: the gradient w.r.t. each output (may be omitted for one-element outputs).
        retain_graph: keep the graph for another backward; defaults to ``create_graph``.
        create_graph: record the backward pass so it can be differentiated again.
        inputs: accumulate only into these tensors.

    Example:
        >>> import funcgrad as fg
        >>> x = fg.tensor(3.0, requires_grad=True)
        >>> fg.autograd.backward(x ** 2)
        >>> x.grad
        tensor(6.)
    """
    outputs = _as_tuple(tensors)
    seeds = _seed_gradients(outputs, grad_tensors, create_graph, batched=False)
    chosen = _as_tuple(inputs) if inputs is not None else None
    if chosen is not None:
        if not chosen:
            raise RuntimeError("'inputs' argument to backward() cannot be empty")
        _check_inputs(chosen)
    run_backward(outputs, seeds, inputs=chosen, accumulate=True, create_graph=create_graph,
                 retain_graph=create_graph if retain_graph is None else retain_graph)


def grad(outputs: _Tensors, inputs: _Tensors, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None, materialize_grads: bool = False,
         is_grads_batched: bool = False) -> tuple[Tensor | None, ...]:
    """Return the gradients of ``outputs`` w.r.t. ``inputs`` without touching any ``.grad``.

    Args:
        outputs: the tensors to differentiate.
        inputs: the tensors to differentiate with respect to.
        grad_outputs: the vector in the vector-Jacobian product, one per output.
        retain_graph: keep the graph for another backward; defaults to ``create_graph``.
        create_graph: record the computation so the result can be differentiated again.
        allow_unused: return None for an input the outputs do not depend on instead of raising.
        materialize_grads: return zeros instead of None for unused inputs (implies allow_unused).
        is_grads_batched: every ``grad_outputs`` entry has a leading batch dimension; one backward pass
            computes the vector-Jacobian product for each.

    Returns:
        A tuple with one gradient per input.

    Example:
        >>> import funcgrad as fg
        >>> x = fg.tensor(2.0, requires_grad=True)
        >>> fg.autograd.grad(x ** 3, x)
        (tensor(12.),)
    """
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError("grad requires at least one input")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    _check_inputs(ins)
    seeds = _seed_gradients(outs, grad_outputs, create_graph, is_grads_batched)
    found = run_backward(outs, seeds, inputs=ins, accumulate=False, create_graph=create_graph,
                         retain_graph=create_graph if retain_graph is None else retain_graph,
                         batch=1 if is_grads_batched else 0)
    results: list[Tensor | None] = []
    for i, (t, g) in enumerate(zip(ins, found)):  # type: ignore[arg-type]
        if g is None:
            if not (materialize_grads or allow_unused):
                raise RuntimeError(f"One of the differentiated Tensors (input {i}) appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the desired behavior.")
            if not materialize_grads:
                results.append(None)
                continue
            g = np.zeros((seeds[0].shape[0],) + t.shape if is_grads_batched else t.shape, t.dtype)
        else:
            shape = ((g.shape[0],) + t.data.shape) if is_grads_batched else t.data.shape
            if tuple(g.shape) != shape:
                g = np.broadcast_to(g, shape)
        results.append(g if isinstance(g, Tensor) else Tensor(unshared(g)))
    return tuple(results)


def _check_inputs(inputs: tuple[Any, ...]) -> None:
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"inputs[{i}] is a {type(t).__name__}, not a Tensor")
        if not t._requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require grad; "
                               "call requires_grad_() on it or leave it out of inputs")


def zero_grads(tensors: Iterable[Tensor], set_to_none: bool = True) -> None:
    """Reset the ``.grad`` of ``tensors`` (what ``Module.zero_grad`` and ``Optimizer.zero_grad`` do): to None,
    or to zeros in place, cut from any graph, as torch."""
    for t in tensors:
        if t.grad is None:
            continue
        if set_to_none:
            t.grad = None
        else:
            t.grad = t.grad.detach() if t.grad.grad_fn is not None else t.grad
            t.grad.zero_()
