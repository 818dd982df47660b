"""check_function: the whole contract of a custom Function."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.autograd import Function
from funcgrad.check import GradcheckError, check_function
from tests.check.corpus import NOISY, NUMPY_BACKWARD, ONCE, RIGHT, SECOND_ORDER_WRONG, WRONG, Case, Product


@pytest.mark.parametrize("case", RIGHT, ids=lambda c: c.name)
def test_right_functions_keep_the_contract(case: Case) -> None:
    verdict = check_function(case.function, *case.inputs(np.float64))
    assert verdict.status == "pass" and not verdict.reasons and not verdict.elements


@pytest.mark.parametrize("case", WRONG + [SECOND_ORDER_WRONG, NOISY], ids=lambda c: c.name)
def test_wrong_functions_break_it(case: Case) -> None:
    with pytest.raises(GradcheckError):
        check_function(case.function, *case.inputs(np.float64))


def test_forgotten_mark_dirty_is_named() -> None:
    with pytest.raises(GradcheckError, match="mark_dirty") as info:
        check_function(WRONG[-1].function, *WRONG[-1].inputs(np.float64))
    assert info.value.check == "function contract"


def test_once_differentiable_skips_second_order() -> None:
    verdict = check_function(ONCE.function, *ONCE.inputs(np.float64))
    assert verdict.status == "pass" and verdict.reasons == ["second order skipped: the backward is once_differentiable"]


def test_unmarked_numpy_backward_fails_second_order() -> None:
    # its report names once_differentiable as a likely cause; that must not turn the failure into a skip
    with pytest.raises(GradcheckError, match="once_differentiable") as info:
        check_function(NUMPY_BACKWARD.function, *NUMPY_BACKWARD.inputs(np.float64))
    assert info.value.check == "verdict" and info.value.verdict.status == "fail"
    assert any("wrong only at second order" in d for d in info.value.verdict.diagnosis)


class TooManyGrads(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0, g


class Float32Grad(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return (g * 2.0).data.astype(np.float32)


class IgnoresNeedsInputGrad(Product):
    """Reads needs_input_grad at the wrong index, so y's gradient goes missing when x needs none."""

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        gy = g * x if ctx.needs_input_grad[0] else None
        return g * y, gy


@pytest.mark.parametrize("function,match", [(TooManyGrads, "gradients but forward takes"),
                                            (Float32Grad, "dtype float32")])
def test_backward_return_values(function: type[Function], match: str) -> None:
    with pytest.raises(GradcheckError, match=match):
        check_function(function, fg.randn(3, seed=0))


def test_needs_input_grad_is_exercised() -> None:
    with pytest.raises(GradcheckError, match="input 1"):
        check_function(IgnoresNeedsInputGrad, fg.randn(3, seed=0), fg.randn(3, seed=1))


class RealTimesComplex(Product):
    """x (real) * z (complex); z's gradient is ``factor`` times the right one."""

    factor = 1.0

    @staticmethod
    def backward(ctx, g):
        x, z = ctx.saved_tensors
        return (g * fg.conj(z)).real, g * x * RealTimesComplex.factor


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_complex_inputs_are_checked(fast_mode: bool) -> None:
    # only float inputs required grad: a wrong gradient of a complex input passed
    x, z = fg.randn(3, seed=0), fg.tensor(np.array([1 + 2j, 3 - 1j, 0.5j]))
    assert check_function(RealTimesComplex, x, z, fast_mode=fast_mode).status == "pass"
    RealTimesComplex.factor = 1.5
    try:
        verdict = check_function(RealTimesComplex, x, z, fast_mode=fast_mode, raise_exception=False)
    finally:
        RealTimesComplex.factor = 1.0
    assert verdict.status == "fail" and "w.r.t. input 1" in verdict.elements[0].where, str(verdict)
    assert "analytical = 1.5 x numerical" in "\n".join(verdict.diagnosis)
