"""gradcheck/gradgradcheck on plain functions: options with torch's meaning, fast vs slow, eps="auto", kinks."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.autograd import Function
from funcgrad.check import GradcheckError, check_function, gradcheck, gradgradcheck
from tests.check.corpus import NOISY, ONCE, RIGHT, SECOND_ORDER_WRONG, WRONG, Case, Sin, SquareByLayout


def leaf(*shape: int, seed: int = 0, dtype: type = np.float64) -> fg.Tensor:
    return fg.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=dtype, requires_grad=True)


def verdict(check, case: Case, dtype: type = np.float64, **kwargs) -> str:
    """"ok" or the name of the failed check."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            check(case.call, case.inputs(dtype), **kwargs)
        except GradcheckError as err:
            return err.check
    return "ok"


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("case", RIGHT, ids=lambda c: c.name)
def test_right_functions_pass(case: Case, fast_mode: bool) -> None:
    assert verdict(gradcheck, case, fast_mode=fast_mode) == "ok"
    assert verdict(gradgradcheck, case, fast_mode=fast_mode) == "ok"


@pytest.mark.parametrize("case", WRONG, ids=lambda c: c.name)
def test_wrong_functions_fail_and_fast_mode_agrees(case: Case) -> None:
    assert verdict(gradcheck, case) == verdict(gradcheck, case, fast_mode=True) == "jacobian"


@pytest.mark.parametrize("case", RIGHT + WRONG, ids=lambda c: c.name)
def test_auto_eps_in_float32(case: Case) -> None:
    expected = "ok" if case in RIGHT else "jacobian"
    assert verdict(gradcheck, case, np.float32, eps="auto") == expected


def test_fixed_eps_fails_a_right_float32_derivative_and_warns() -> None:
    x = leaf(20, dtype=np.float32)
    with pytest.warns(UserWarning, match="float64"):
        assert not gradcheck(fg.sigmoid, (x,), eps=1e-4, raise_exception=False)
    assert gradcheck(fg.sigmoid, (x,), eps="auto")


def test_right_first_order_wrong_second_order() -> None:
    for fast_mode in (False, True):
        assert verdict(gradcheck, SECOND_ORDER_WRONG, fast_mode=fast_mode) == "ok"
        assert verdict(gradgradcheck, SECOND_ORDER_WRONG, fast_mode=fast_mode) == "second order jacobian"


def test_grad_outputs_one_per_differentiable_output() -> None:
    # zip dropped the outputs beyond the grad_outputs given: x ** 3's wrong second order (x.detach()) passed
    def f(x):
        return fg.sin(x), x * x * x.detach()
    x = leaf(3)
    assert not gradgradcheck(f, (x,), raise_exception=False)
    for gos in [(leaf(3, seed=1),), (leaf(3, seed=1), leaf(3, seed=2), leaf(3, seed=3))]:
        with pytest.raises(RuntimeError, match=f"got 2 tensors and {len(gos)} gradients"):  # torch's words
            gradgradcheck(f, (x,), gos)
    assert gradgradcheck(lambda t: (fg.sin(t), fg.tensor(1.0)), (x,), (leaf(3, seed=1),))  # a constant: no grad


def test_nondeterministic_backward_is_not_reentrant() -> None:
    for fast_mode in (False, True):
        assert verdict(gradcheck, NOISY, fast_mode=fast_mode) == "reentrancy"
    assert verdict(gradcheck, NOISY, nondet_tol=1e-6, check_undefined_grad=False) == "ok"


def test_multiple_inputs_outputs_non_tensor_args_and_unused_inputs() -> None:
    def f(x, k, y, z):
        return x * k + y, fg.sin(y), fg.tensor(1)  # z unused, an int output ignored
    assert gradcheck(f, (leaf(3), 2.0, leaf(3, seed=1), leaf(2, seed=2)))
    assert gradgradcheck(f, (leaf(3), 2.0, leaf(3, seed=1), leaf(2, seed=2)))
    assert gradcheck(f, (leaf(3), 2.0, fg.tensor([1.0, 2.0, 3.0]), leaf(2)), fast_mode=True)


def test_nested_list_inputs() -> None:
    def total(xs):
        return xs[0] * xs[1]
    assert gradcheck(total, ([leaf(2), leaf(2, seed=1)],))


def test_report_names_coordinates_and_causes() -> None:
    def wrong(x):
        return fg.sin(x) if not x.requires_grad else fg.sin(x.detach()) + 0 * x  # backward drops cos(x)
    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong, (leaf(2, 3),))
    text = str(info.value)
    assert info.value.check == "jacobian" and info.value.input_index == 0 and info.value.output_index == 0
    assert "6 of 36 elements" in text and "(1, 2)" in text and "numerical Jacobian" in text


def test_large_jacobians_are_summarised_with_causes() -> None:
    case = WRONG[0]  # WrongSign
    with pytest.raises(GradcheckError, match="not shown") as info:
        gradcheck(case.call, (leaf(10, 10),))
    assert len(str(info.value)) < 3000 and "wrong sign" in str(info.value)


def test_kink_is_reported_as_such() -> None:
    x = fg.tensor([1e-7, 0.5, -0.7], requires_grad=True)
    with pytest.raises(GradcheckError, match="kink") as info:
        gradcheck(fg.abs, (x,))
    assert info.value.check == "kink"
    assert gradcheck(fg.abs, (fg.tensor([0.3, -0.5], requires_grad=True),))


class NonzeroForZeroGrad(Sin):
    """Right for a nonzero grad_output, but not zero for a zero one."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * fg.cos(x) + (1.0 if not np.any(g.data) else 0.0)


class CrashOnNone(Function):
    """Two outputs, undefined grads not materialised, and a backward that assumes both are given."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2.0, x * 3.0

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2.0 + g2 * 3.0


def test_undefined_grad_must_give_zeros_without_crashing() -> None:
    with pytest.raises(GradcheckError, match="not zero") as info:
        gradcheck(NonzeroForZeroGrad.apply, (leaf(3),))
    assert info.value.check == "undefined grad"
    assert gradcheck(NonzeroForZeroGrad.apply, (leaf(3),), check_undefined_grad=False)
    with pytest.raises(TypeError):  # as torch: the per-output Jacobian already meets the None
        gradcheck(CrashOnNone.apply, (leaf(3),))


def test_batched_grad_and_dtypes() -> None:
    assert gradcheck(lambda x, y: x * y, (leaf(2, 3), leaf(3, seed=1)), check_batched_grad=True,
                     check_grad_dtypes=True)


def test_options_validation() -> None:
    with pytest.raises(ValueError, match="at least one"):
        gradcheck(fg.sin, (leaf(2),), check_backward_ad=False)
    with pytest.raises(ValueError, match="require"):
        gradcheck(fg.sin, (fg.tensor([1.0]),))


def test_matches_torch_verdicts() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal(4)
    assert gradcheck(fg.tanh, (fg.tensor(x, requires_grad=True),)) == torch.autograd.gradcheck(
        torch.tanh, (torch.tensor(x, requires_grad=True),))


@pytest.mark.parametrize("fast_mode", [False, True])
def test_a_function_without_gradient_is_refused(fast_mode: bool) -> None:
    x = leaf(3)
    for func in (lambda t: np.sin(t.data), lambda t: fg.tensor(np.sin(t.data)), lambda t: fg.sin(t).detach()):
        with pytest.raises(GradcheckError, match="expected to be zero") as info:
            gradcheck(func, (x,), fast_mode=fast_mode)
        assert info.value.check == "no differentiable outputs"
        with pytest.raises(GradcheckError, match="expected to be zero"):
            gradgradcheck(func, (x,), fast_mode=fast_mode)
    assert gradcheck(lambda t: fg.ones(3), (x,), fast_mode=fast_mode)  # constant: no gradient, rightly
    assert gradgradcheck(lambda t: fg.ones(3), (x,), fast_mode=fast_mode)


def test_outputs_that_do_not_require_grad_are_left_out_as_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal(3)
    tx = torch.tensor(x, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: (torch.sin(t), torch.cos(t).detach()), (tx,))
    with pytest.raises(RuntimeError, match="expected to be zero"):
        torch.autograd.gradcheck(lambda t: torch.sin(t).detach(), (tx,))
    assert gradcheck(lambda t: (fg.sin(t), fg.cos(t).detach()), (fg.tensor(x, requires_grad=True),))


def test_once_differentiable_is_named_in_second_order() -> None:
    assert verdict(gradcheck, ONCE) == "ok"
    assert verdict(gradgradcheck, ONCE) == "second order once_differentiable"


class FirstRowOnly(Function):
    """Right row by row, but reads only the first grad_output of a batch (a NumPy backward on ``g.data``)."""

    @staticmethod
    def forward(ctx, x):
        return x * 3.0

    @staticmethod
    def backward(ctx, g):
        return fg.tensor(3.0 * g.data.reshape(-1)[:g.shape[-1]])


def test_slow_mode_verdict_does_not_depend_on_batching() -> None:
    # the batched analytical Jacobian is confirmed by row-wise projections, else the rows are computed one by one;
    # a batched pass calls a Function's backward once per row (as torch's vmap does), so batching is right too
    assert gradcheck(FirstRowOnly.apply, (leaf(4),))
    assert gradcheck(FirstRowOnly.apply, (leaf(4),), check_batched_grad=True)


# ----- wrong derivatives that only show on some inputs: the checker must see what the user passed ---------------
@pytest.mark.parametrize("layout", [lambda a: a.T, lambda a: a[:, ::2], lambda a: a[::-1]],
                         ids=["transposed", "sliced", "reversed"])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_non_contiguous_inputs_are_checked_with_their_layout(layout, fast_mode: bool) -> None:
    data = layout(np.random.default_rng(0).standard_normal((4, 6)))
    x = fg.from_numpy(data).requires_grad_()
    assert not x.data.flags.c_contiguous
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(SquareByLayout.apply, (x,), fast_mode=fast_mode)
    assert gradcheck(SquareByLayout.apply, (fg.tensor(np.ascontiguousarray(data)).requires_grad_(),),
                     fast_mode=fast_mode)
    assert gradcheck(lambda t: t * t, (x,), fast_mode=fast_mode)  # a right derivative still passes
    assert gradcheck(SquareByLayout.apply, (x,), three_valued=True, raise_exception=False).failed
    np.testing.assert_array_equal(x.data, data)  # the caller's tensor is untouched


def test_complex_non_contiguous_input_is_perturbed_in_place() -> None:
    rng = np.random.default_rng(1)
    z = fg.from_numpy((rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).T).requires_grad_()
    assert gradcheck(lambda t: t * t.conj() * t, (z,))
    assert gradcheck(lambda t: t * t.conj() * t, (z,), fast_mode=True)


class SinMutatingGrad(Sin):
    """sin with ``g.mul_(cos x)``: right alone, wrong for every other consumer of the same gradient."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g.mul_(fg.cos(x))


@pytest.mark.parametrize("fast_mode", [False, True])
def test_backward_modifying_grad_output_in_place_is_refused(fast_mode: bool) -> None:
    # torch's fast mode refuses it too (as not reentrant); its slow mode passes the first call
    for func in (SinMutatingGrad.apply, lambda t: (SinMutatingGrad.apply(t), t * 2.0)):
        with pytest.raises(GradcheckError, match="A backward modified in place the grad_output given for output 0"):
            gradcheck(func, (leaf(5),), fast_mode=fast_mode)
    x = leaf(5)  # what goes wrong: the sum's other input gets the changed gradient
    (gx,) = fg.autograd.grad(SinMutatingGrad.apply(x) + x, x, fg.ones(5))
    assert not np.allclose(gx.data, np.cos(x.data) + 1)


def test_check_function_keeps_a_transposed_layout() -> None:
    data = np.random.default_rng(2).standard_normal((3, 4)).T
    verdict = check_function(SquareByLayout, fg.from_numpy(data), order=1, raise_exception=False)
    assert verdict.failed
    assert check_function(SquareByLayout, fg.tensor(np.ascontiguousarray(data)), order=1).status == "pass"


class SinAbsGrad(Sin):
    """sin with ``|g| cos x``: right for every one-hot grad_output, wrong for a negative one."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return fg.abs(g) * fg.cos(x)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_backward_nonlinear_in_grad_output_is_refused(fast_mode: bool) -> None:
    # torch passes it: its slow mode only uses one-hot grad_outputs, its fast mode positive ones
    with pytest.raises(GradcheckError, match="The backward is not linear in grad_output: for output 0 w.r.t. input 0"):
        gradcheck(SinAbsGrad.apply, (leaf(4),), fast_mode=fast_mode)
    x = leaf(4)
    (g,) = fg.autograd.grad(SinAbsGrad.apply(x), x, -fg.ones(4))
    assert not np.allclose(g.data, -np.cos(x.data))


def test_check_function_reports_a_backward_writing_into_grad_output() -> None:
    verdict = check_function(SinMutatingGrad, fg.randn(4, seed=0), raise_exception=False)
    assert verdict.failed
    assert "grad_output modified" in str(verdict)
    assert "second order not checked: the first order fails" in verdict.reasons


class _Softmax(Function):
    """softmax over dim 0 whose backward is ``factor`` times the right one."""

    factor = 1.0

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.softmax(x, 0)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        p = fg.softmax(x, 0)
        return p * (g - (g * p).sum()) * _Softmax.factor


@pytest.mark.parametrize("fast_mode", [False, True])
def test_auto_eps_descends_when_its_step_is_too_large(fast_mode: bool) -> None:
    # eps="auto" steps relative to |x|: 41 at float32 1000, where softmax (a function of differences) saturates and
    # Richardson's h, h/2, h/4 do not converge: a right derivative failed as "Input near a kink"
    x = leaf(3, dtype=np.float32)
    x.data[:] = [1000.0, 999.0, 998.5]
    assert gradcheck(lambda t: fg.softmax(t, 0), (x,), eps="auto", fast_mode=fast_mode)
    _Softmax.factor = 1.003
    try:
        assert not gradcheck(_Softmax.apply, (x,), eps="auto", fast_mode=fast_mode, raise_exception=False)
    finally:
        _Softmax.factor = 1.0
    # converged beside the column's largest derivative (a zero off the diagonal is), and the ladder divides by the
    # shift float32 really makes at its small steps: 1.5 log y came out 0.5% off
    assert gradcheck(lambda t: fg.xlogy(1.5, t), (fg.tensor(np.float32([0.5, 2.0]), requires_grad=True),), eps="auto",
                     fast_mode=fast_mode)
