"""Test helpers: ``assert_grads_close`` (PyTorch's verdicts) and ``assert_grads_correct`` (three-valued: fails only
on ``fail``, warns on ``inconclusive``), the one call a (hypothesis) test makes to check derivatives.

Both are deterministic for given inputs (the random directions and grad_outputs are seeded), so hypothesis can
replay and shrink a failure, and both raise ``AssertionError`` carrying the report.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.autograd import Function
from funcgrad.check.arguments import layout_copy
from funcgrad.check.contract import check_function
from funcgrad.check.gradcheck import gradcheck, gradgradcheck
from funcgrad.check.numerical import Step
from funcgrad.check.report import GradcheckError
from funcgrad.check.verdict import INCONCLUSIVE, Verdict, combine, with_second_order
from funcgrad.core.tensor import Tensor

__all__ = ["assert_grads_close", "assert_grads_correct", "InconclusiveCheckWarning", "check_op"]


def _leaf(value: Any) -> Any:
    """A float or complex array (or Tensor) becomes a leaf requiring grad; anything else is passed through."""
    if isinstance(value, Tensor):
        value = value.data
    if isinstance(value, np.ndarray | np.inexact | float | complex) and np.asarray(value).dtype.kind in "fc":
        return Tensor(layout_copy(np.asarray(value)), requires_grad=True)  # the layout kept: see arrays(layouts=)
    return value


def assert_grads_close(f: Callable[..., Any], *inputs: Any, order: int = 2, eps: Step | None = None,
                       atol: float = 1e-5, rtol: float = 1e-3, fast_mode: bool = False,
                       check_batched_grad: bool = False) -> None:
    """Assert that autograd's derivatives of ``f`` up to ``order`` match finite differences at ``inputs``.

    Args:
        f: a function of Tensors (e.g. ``funcgrad.mul`` or ``MyFunction.apply``).
        *inputs: its arguments; float arrays and Tensors become leaves requiring grad, others pass through.
        order: 1 (gradcheck) or 2 (gradcheck and gradgradcheck).
        eps: the step; None means 1e-6 for float64 inputs and ``"auto"`` otherwise.
        atol, rtol, fast_mode, check_batched_grad: as ``gradcheck``.

    Raises:
        AssertionError: with the ``GradcheckError`` report, for hypothesis to shrink.

    Example:
        >>> import funcgrad as fg
        >>> from hypothesis import given, settings
        >>> from funcgrad.check.strategies import broadcastable_arrays
        >>> @settings(max_examples=5, deadline=None)
        ... @given(xs=broadcastable_arrays(2))
        ... def test_mul(xs):
        ...     assert_grads_close(fg.mul, *xs, order=2)
        >>> test_mul()
    """
    leaves = tuple(_leaf(x) for x in inputs)
    if eps is None:
        floats = [x for x in leaves if isinstance(x, Tensor) and x.requires_grad]
        eps = 1e-6 if all(x.dtype == np.float64 for x in floats) else "auto"
    options = dict(eps=eps, atol=atol, rtol=rtol, fast_mode=fast_mode, check_batched_grad=check_batched_grad)
    try:
        gradcheck(f, leaves, **options)  # type: ignore[arg-type]
        if order >= 2:
            gradgradcheck(f, leaves, **options)  # type: ignore[arg-type]
    except GradcheckError as err:
        shapes = ", ".join(str(x.shape) for x in leaves if isinstance(x, Tensor))
        raise AssertionError(f"{err.check} check failed for {getattr(f, '__name__', f)} at input shapes "
                             f"({shapes}):\n{err}") from err


class InconclusiveCheckWarning(UserWarning):
    """A three-valued check could not decide; the message gives the reasons (kink, resolution, non-determinism)."""


def assert_grads_correct(f: Callable[..., Any] | type[Function], *inputs: Any, order: int = 2,
                         fast_mode: bool = False) -> Verdict:
    """Judge the derivatives of ``f`` up to ``order`` with three-valued verdicts: fail only on ``fail``.

    Args:
        f: a function of Tensors, or a custom ``Function`` subclass (then its whole contract, by
            ``check_function``).
        *inputs: its arguments; float arrays and Tensors become leaves requiring grad, others pass through.
        order: 1 (first derivatives) or 2 (second derivatives too).
        fast_mode: probe blocks of elements instead of walking every element.

    Returns:
        The verdict (``pass`` or ``inconclusive``).

    Raises:
        AssertionError: the verdict is ``fail``; the message is its report.

    Warns:
        InconclusiveCheckWarning: the verdict is ``inconclusive``; the message gives the reasons.

    Example:
        >>> import funcgrad as fg
        >>> assert_grads_correct(fg.sigmoid, np.linspace(-3, 3, 7, dtype=np.float32)).status
        'pass'
    """
    leaves = tuple(_leaf(x) for x in inputs)
    if isinstance(f, type) and issubclass(f, Function):
        verdict = check_function(f, *leaves, order=order, fast_mode=fast_mode, raise_exception=False)
    else:
        options = dict(three_valued=True, fast_mode=fast_mode, raise_exception=False)
        verdicts = [gradcheck(f, leaves, **options)]
        if order >= 2:
            verdicts = with_second_order(verdicts, gradgradcheck(f, leaves, **options))
        verdict = combine(verdicts, f"derivatives of {getattr(f, '__name__', f)}")
    if verdict.failed:
        raise AssertionError(str(verdict))
    if verdict.status == INCONCLUSIVE:
        warnings.warn(str(verdict), InconclusiveCheckWarning, stacklevel=2)
    return verdict


check_op = assert_grads_close  # the name STYLE.md section 8 uses
