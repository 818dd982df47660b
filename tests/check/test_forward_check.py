"""gradcheck(check_forward_ad=True): forward mode against finite differences and against reverse mode."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.autograd import Function
from funcgrad.check import GradcheckError, gradcheck, gradgradcheck
from tests.check.corpus import Sin, SumOneDirection


class Cube(Function):
    """x ** 3 with a right vjp and a jvp given as a class attribute factor (3 is right)."""

    factor = 3.0

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x

    @classmethod
    def jvp(cls, ctx, t):
        (x,) = ctx.saved_tensors
        return cls.factor * t * x * x


class WrongJvpCube(Cube):
    factor = 2.0


def leaf() -> fg.Tensor:
    return fg.randn(2, 3, seed=4, requires_grad=True)


@pytest.mark.parametrize("fn", [lambda x: fg.tanh(x @ fg.ones(3, 2)), lambda x: fg.log_softmax(x, dim=1),
                                lambda x: fg.linalg.det(x[:, :2]), Cube.apply])
def test_right_forward_mode_passes(fn) -> None:
    assert gradcheck(fn, (leaf(),), check_forward_ad=True)
    assert gradcheck(fn, (leaf(),), check_forward_ad=True, check_backward_ad=False)


def test_wrong_jvp_fails_against_finite_differences() -> None:
    with pytest.raises(GradcheckError, match="Forward-mode Jacobian") as info:
        gradcheck(WrongJvpCube.apply, (leaf(),), check_forward_ad=True, check_backward_ad=False)
    assert info.value.check == "forward AD"
    assert not gradcheck(WrongJvpCube.apply, (leaf(),), check_forward_ad=True, raise_exception=False)


def test_forward_over_reverse_second_derivatives() -> None:
    assert gradgradcheck(lambda x: (fg.exp(x) * fg.sin(x)).sum(), (leaf(),), check_fwd_over_rev=True)


def test_neither_mode_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        gradcheck(fg.sin, (leaf(),), check_backward_ad=False)
    np.testing.assert_allclose(fg.sin(fg.zeros(1)).data, [0.0])


class SinRightOnlyBatched(Sin):
    """sin whose jvp is 10% off for one tangent and right for a batch of them."""

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return t * fg.cos(x) * (1.0 if t.ndim > x.ndim else 1.1)


def test_forward_check_uses_the_tangents_users_push() -> None:
    assert gradcheck(SumOneDirection.apply, (leaf(),), check_forward_ad=True)
    assert gradcheck(lambda x: SumOneDirection.apply(x) * x, (leaf(),), check_forward_ad=True)
    with pytest.raises(GradcheckError, match="Forward-mode Jacobian .JVP. mismatch for output 0 with respect to "):
        gradcheck(SinRightOnlyBatched.apply, (leaf(),), check_forward_ad=True)


def test_real_input_of_a_complex_output() -> None:
    # the tangent of x + z pushed from the real x is real: its imaginary parts are zero, not a reshape error
    x = fg.randn(3, seed=1, requires_grad=True)
    z = fg.tensor(np.array([1 + 2j, -0.5 + 0.3j, 2j]), requires_grad=True)
    assert gradcheck(lambda a, b: a + b, (x, z), check_forward_ad=True)
    assert gradcheck(lambda a, b: a * b, (x, z), check_forward_ad=True, check_backward_ad=False)


def test_no_differentiable_output_in_forward_mode() -> None:
    # as torch: the numerical gradient must be zero; the forward check crashed on an empty tangent batch
    x = leaf()
    for backward_ad in (True, False):
        assert gradcheck(lambda t: fg.tensor(np.arange(3)), (x,), check_forward_ad=True, check_backward_ad=backward_ad)
        assert not gradcheck(lambda t: fg.tensor(np.sin(t.data)), (x,), check_forward_ad=True,
                             check_backward_ad=backward_ad, raise_exception=False)
