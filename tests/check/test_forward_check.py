"""gradcheck(check_forward_ad=True): forward mode against finite differences and against reverse mode."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.autograd import Function
from funcgrad.check import GradcheckError, gradcheck, gradgradcheck
from funcgrad.ops.registry import OPS, defop
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


class CubeTangent(Cube):
    """Cube whose jvp returns ``tangent(right tangent)``: the right values in a wrong shape or dtype."""

    tangent = staticmethod(lambda t: t)

    @classmethod
    def jvp(cls, ctx, t):
        return cls.tangent(super().jvp(ctx, t))


def with_tangent(tangent) -> type[Function]:
    return type("Bad", (CubeTangent,), {"tangent": staticmethod(tangent)})


@pytest.mark.parametrize("backward_ad", [True, False])
def test_complex_tangent_of_a_real_output_fails(backward_ad: bool) -> None:
    # torch's gradcheck keeps the real part (with a warning) and passes; here it is a clear failure, not a reshape crash
    bad = with_tangent(lambda t: t * (1 + 0.5j))
    with pytest.raises(GradcheckError, match="tangent of output 0 .pushed from input 0. has dtype complex128 while "
                                             "the output is real .float64.") as info:
        gradcheck(bad.apply, (leaf(),), check_forward_ad=True, check_backward_ad=backward_ad)
    assert (info.value.check, info.value.output_index, info.value.input_index) == ("forward AD", 0, 0)
    assert "return .real" in str(info.value)
    assert not gradcheck(bad.apply, (leaf(),), check_forward_ad=True, check_backward_ad=backward_ad,
                         raise_exception=False)


def test_tangent_of_the_wrong_kind_fails() -> None:
    with pytest.raises(GradcheckError, match="has dtype int64 while the output has dtype float64"):
        gradcheck(with_tangent(lambda t: fg.tensor(t.data.astype(np.int64))).apply, (leaf(),), check_forward_ad=True)


def test_tangent_of_the_wrong_shape_is_refused_by_the_function() -> None:
    # as torch: Function.apply refuses it (a RuntimeError) before any comparison
    with pytest.raises(RuntimeError, match=r"Bad.jvp returned a tangent of shape \[5, 2, 3\] for output 0 of shape "
                                           r"\[2, 3\]"):
        gradcheck(with_tangent(lambda t: t.expand(5, 2, 3)).apply, (leaf(),), check_forward_ad=True)


def test_tangent_precision_is_checked_with_check_grad_dtypes() -> None:
    float32 = with_tangent(lambda t: t.to(np.float32))
    assert gradcheck(float32.apply, (leaf(),), check_forward_ad=True)  # as torch: values are compared
    with pytest.raises(GradcheckError, match="has dtype float32 while the output has dtype float64"):
        gradcheck(float32.apply, (leaf(),), check_forward_ad=True, check_grad_dtypes=True)
    x = fg.randn(3, seed=1, requires_grad=True)
    z = fg.tensor(np.array([1 + 2j, -0.5 + 0.3j, 2j]), requires_grad=True)
    assert gradcheck(lambda a, b: a * b, (x, z), check_forward_ad=True, check_grad_dtypes=True)  # real tangent of z


# ----- check_batched_forward_grad: a batch of tangents in one pass against one tangent at a time ------------------
class MemoJvpSin(Sin):
    """sin whose jvp computes its tangent once per ctx, as a jvp may under torch (called once per forward): a batch
    of tangents gives each direction after the first a copy of ctx as forward left it, so none reads another's."""

    @staticmethod
    def jvp(ctx, t):
        if not hasattr(ctx, "tangent"):
            (x,) = ctx.saved_tensors
            ctx.tangent = t * fg.cos(x)
        return ctx.tangent


@pytest.mark.parametrize("fn", [lambda x: fg.tanh(x @ fg.ones(3, 2)), lambda x: fg.log_softmax(x, dim=1),
                                lambda x: fg.linalg.det(x[:, :2]), Cube.apply, lambda x: (x.sum(0), x * x),
                                MemoJvpSin.apply])
def test_batched_forward_grad_passes_right_ops(fn) -> None:
    for backward_ad in (True, False):
        assert gradcheck(fn, (leaf(),), check_forward_ad=True, check_backward_ad=backward_ad,
                         check_batched_forward_grad=True)


def test_batched_forward_grad_catches_an_op_rule_that_sums_over_the_batch() -> None:
    # an op's jvp rule sees the batch (a Function's jvp never does): x_t.sum(0) is right for one tangent only
    column_sums = defop("column_sums_summing_the_batch", lambda x: np.sum(x, axis=0), x=lambda g, x: g + 0 * x,
                        jvp=lambda x_t: x_t.sum(0))
    try:
        assert gradcheck(column_sums, (leaf(),), check_forward_ad=True)
        with pytest.raises(GradcheckError, match=r"for a batch of 3 tangents\) has shape \[2, 3\] while the output "
                                                 r"has shape \[3\] with a batch of 3 in front"):
            gradcheck(column_sums, (leaf(),), check_forward_ad=True, check_batched_forward_grad=True)
    finally:
        del OPS["column_sums_summing_the_batch"]


def test_batched_checks_require_their_mode() -> None:
    # as torch (an AssertionError there; the option errors here are ValueErrors)
    with pytest.raises(ValueError, match="check_batched_forward_grad=True requires check_forward_ad"):
        gradcheck(fg.sin, (leaf(),), check_batched_forward_grad=True)
    with pytest.raises(ValueError, match="check_batched_grad=True requires check_backward_ad"):
        gradcheck(fg.sin, (leaf(),), check_forward_ad=True, check_backward_ad=False, check_batched_grad=True)


def test_batched_forward_grad_option_as_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3))
    assert torch.autograd.gradcheck(torch.sin, (torch.tensor(x, requires_grad=True),), check_forward_ad=True,
                                    check_batched_forward_grad=True)
    assert gradcheck(fg.sin, (fg.tensor(x, requires_grad=True),), check_forward_ad=True,
                     check_batched_forward_grad=True)
    assert inspect.signature(gradcheck).parameters["check_batched_forward_grad"].default is (
        inspect.signature(torch.autograd.gradcheck).parameters["check_batched_forward_grad"].default)
