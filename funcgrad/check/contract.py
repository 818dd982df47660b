"""``check_function``: check a custom ``Function``'s whole contract, not only its numbers.

Beyond ``gradcheck``/``gradgradcheck`` (values, reentrancy, undefined grads, second order) it calls ``backward``
directly to see what it really returns (count, shapes, dtypes), re-checks with each input alone requiring grad
(``needs_input_grad``), and watches the forward for in-place changes that were not declared with ``mark_dirty``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.autograd import Function
from funcgrad.check.arguments import layout_copy
from funcgrad.check.gradcheck import gradcheck, gradgradcheck
from funcgrad.check.report import GradcheckError
from funcgrad.check.verdict import FAIL, Verdict, combine, with_second_order
from funcgrad.core.tensor import Tensor

__all__ = ["check_function"]

def _fail(name: str, message: str, input_index: int | None = None) -> GradcheckError:
    return GradcheckError("function contract", f"{name}: {message}", input_index=input_index)


def _tensor_outputs(result: Any) -> tuple[Any, ...]:
    return result if isinstance(result, tuple) else (result,)


def _clone_inputs(inputs: tuple[Any, ...], needs: set[int]) -> tuple[Any, ...]:
    """Fresh copies; those in ``needs`` are non-leaves requiring grad, so an in-place forward is allowed."""
    return tuple((Tensor(layout_copy(a.data), requires_grad=True) * 1.0 if i in needs else Tensor(layout_copy(a.data)))
                 if isinstance(a, Tensor) else a for i, a in enumerate(inputs))


def _check_forward(function: type[Function], inputs: tuple[Any, ...], needs: set[int]) -> None:
    """An input changed by the forward must be returned as itself, which only ``mark_dirty`` allows."""
    name = function.__name__
    args = _clone_inputs(inputs, needs)
    before = [a.data.copy() if isinstance(a, Tensor) else None for a in args]
    outputs = _tensor_outputs(function.apply(*args))
    for i, (a, b) in enumerate(zip(args, before)):
        if b is not None and not np.array_equal(a.data, b, equal_nan=True):
            if not any(o is a for o in outputs):
                raise _fail(name, f"forward modified input {i} in place without ctx.mark_dirty({i}-th input) "
                            "(or without returning it): autograd then differentiates stale values. Call "
                            "ctx.mark_dirty(x) and return x, or write to a new tensor.", i)


def _check_backward(function: type[Function], inputs: tuple[Any, ...], needs: set[int]) -> None:
    """Call ``backward`` directly: one gradient per forward argument, of the input's shape and dtype."""
    name = function.__name__
    args = _clone_inputs(inputs, needs)
    outputs = _tensor_outputs(function.apply(*args))
    ctx = next((o.grad_fn for o in outputs if isinstance(o, Tensor) and o.requires_grad), None)
    if ctx is None:
        raise _fail(name, "no output requires grad although an input does; return a float Tensor computed from "
                    "the inputs, and do not mark every output non-differentiable")
    grads = [Tensor(np.ones(o.shape, o.dtype)) if isinstance(o, Tensor) else None for o in outputs]
    result = function.backward(ctx, *grads)  # type: ignore[arg-type]
    result = result if isinstance(result, tuple) else (result,)
    extra = result[len(args):]
    if len(result) < len(args) or any(g is not None for g in extra):
        raise _fail(name, f"backward returned {len(result)} gradients but forward takes {len(args)} arguments; "
                    "return one gradient (or None) per argument of forward")
    for i, (a, g) in enumerate(zip(args, result)):
        if g is None:
            continue
        if not isinstance(a, Tensor):
            raise _fail(name, f"backward returned a gradient for argument {i}, which is not a Tensor; return "
                        "None for it", i)
        shape, dtype = tuple(np.shape(g)), np.asarray(g.data if isinstance(g, Tensor) else g).dtype
        if shape != a.shape:
            raise _fail(name, f"the gradient of input {i} has shape {shape} but the input has shape {a.shape}; "
                        "sum the broadcast dimensions (e.g. with sum_to) to the input's shape", i)
        if dtype != a.dtype:
            raise _fail(name, f"the gradient of input {i} has dtype {dtype} but the input has dtype {a.dtype}; "
                        "cast it in backward (a float32 gradient of a float64 input loses precision)", i)


def _with_grad(inputs: tuple[Any, ...], needs: set[int]) -> tuple[Any, ...]:
    """Fresh leaves; those in ``needs`` require grad."""
    return tuple(Tensor(layout_copy(a.data), requires_grad=i in needs) if isinstance(a, Tensor) else a
                 for i, a in enumerate(inputs))


def check_function(function: type[Function], *inputs: Any, order: int = 2, nondet_tol: float = 0.0,
                   fast_mode: bool = False, raise_exception: bool = True) -> Verdict:
    """Check a custom Function's contract at ``inputs`` and return a three-valued ``Verdict``.

    Checks, in order: that an input changed in place by ``forward`` was declared with ``mark_dirty``; that
    ``backward`` returns one gradient per argument, of the input's shape and dtype, and None for non-tensors;
    the first derivatives with all tensor inputs requiring grad (values, reentrancy, zero and undefined output
    grads, so ``set_materialize_grads(False)`` and non-differentiable outputs are exercised); each input alone
    requiring grad (``needs_input_grad``); and the second derivatives when ``order >= 2`` (skipped, and said so,
    for a ``once_differentiable`` backward or a first order that fails). The derivatives are judged by
    ``gradcheck(..., three_valued=True)``: ``fail`` is a real discrepancy, ``inconclusive`` names why finite
    differences cannot decide.

    Args:
        function: the ``Function`` subclass.
        *inputs: its arguments; every floating-point or complex Tensor among them is checked.
        order: 1 for first derivatives only, 2 to check second derivatives too.
        nondet_tol, fast_mode: passed to ``gradcheck``/``gradgradcheck``.
        raise_exception: raise ``GradcheckError`` on ``fail`` (else return the failing verdict).

    Returns:
        The verdict: ``pass``, or ``inconclusive`` with its reasons (or ``fail`` without ``raise_exception``).

    Raises:
        GradcheckError: the verdict is ``fail``; contract violations have ``check == "function contract"``, the
            others carry the verdict as ``.verdict``.

    Example:
        >>> import funcgrad as fg
        >>> class Square(fg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * g
        >>> check_function(Square, fg.randn(3, seed=0)).status
        'pass'
    """
    tensor_idx = [i for i, a in enumerate(inputs) if isinstance(a, Tensor) and a.dtype.kind in "fc"]
    if not tensor_idx:
        raise ValueError(f"check_function({function.__name__}, ...) needs at least one floating-point or complex "
                         "Tensor input")
    every = set(tensor_idx)
    subject = f"check_function({function.__name__})"
    try:
        _check_forward(function, inputs, every)
        try:
            _check_backward(function, inputs, every)
        except RuntimeError as exc:
            if isinstance(exc, GradcheckError):
                raise
            raise _fail(function.__name__, f"backward failed: {exc}") from exc
    except GradcheckError as err:
        if raise_exception:
            raise
        return Verdict(FAIL, subject, reasons=[str(err)])

    def differentiable(*xs: Any) -> Any:
        # a clone per call (a ufunc's: the input's axis order kept): an in-place forward must not change the point
        # gradcheck perturbs; gradcheck leaves out the outputs that do not require grad (marked non-differentiable)
        return function.apply(*[x * 1.0 if isinstance(x, Tensor) and x.requires_grad else x for x in xs])

    options = dict(nondet_tol=nondet_tol, fast_mode=fast_mode, three_valued=True, raise_exception=False)
    first = gradcheck(differentiable, _with_grad(inputs, every), **options)  # type: ignore[arg-type]
    verdicts = [first]
    if len(tensor_idx) > 1:
        for i in tensor_idx:
            alone = gradcheck(differentiable, _with_grad(inputs, {i}), **options)  # type: ignore[arg-type]
            alone.subject = f"first order, input {i} alone requiring grad"
            verdicts.append(alone)
    notes = []
    if order >= 2 and any(v.failed for v in verdicts):  # its backward is wrong already (and may break the second)
        notes.append("second order not checked: the first order fails")
    elif order >= 2:
        try:
            verdicts = with_second_order(verdicts, gradgradcheck(differentiable, _with_grad(inputs, every),
                                                                 **options))  # type: ignore[arg-type]
        except GradcheckError as err:
            if err.check != "second order once_differentiable":
                raise
            notes.append("second order skipped: the backward is once_differentiable")
    verdict = combine(verdicts, subject)
    verdict.reasons += notes
    if verdict.failed and raise_exception:
        raise GradcheckError("verdict", str(verdict), verdict=verdict)
    return verdict
