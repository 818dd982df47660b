"""Three-valued verdicts on the corpus: every bug fails with its diagnosis, every hard-but-correct case passes or
is inconclusive with its reason, in slow and fast mode; the test helper, reports, and torch-mode compatibility."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.autograd import Function
from funcgrad.check import GradcheckError, check_function, gradcheck, gradgradcheck
from funcgrad.check.judge import _Classifier
from funcgrad.check.properties import InconclusiveCheckWarning, assert_grads_correct
from funcgrad.check.verdict import Verdict, with_second_order
from tests.check.corpus import BUGS, HARD_RIGHT, Category, MissingFactor, Square


def verdict_of(category: Category, fast_mode: bool):
    case = category.case
    return check_function(case.function, *case.inputs(category.dtype), order=category.order, fast_mode=fast_mode,
                          raise_exception=False)


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("category", HARD_RIGHT, ids=lambda c: c.name)
def test_hard_but_correct_never_fails(category: Category, fast_mode: bool) -> None:
    verdict = verdict_of(category, fast_mode)
    assert verdict.status in category.allowed, str(verdict)
    assert category.text in str(verdict)


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("category", BUGS, ids=lambda c: c.name)
def test_every_bug_fails_with_its_diagnosis(category: Category, fast_mode: bool) -> None:
    verdict = verdict_of(category, fast_mode)
    assert verdict.status == "fail", str(verdict)
    assert category.text in "\n".join(verdict.diagnosis), str(verdict)


@pytest.mark.parametrize("category", [c for c in HARD_RIGHT if "kink" in c.name or "1e8" in c.name
                                      or "float32" in c.name], ids=lambda c: c.name)
def test_pytorch_mode_raises_false_alarms_on_them(category: Category) -> None:
    # the motivation: PyTorch's fixed step fails correct functions that the three-valued check passes
    case = category.case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        torch_like = gradcheck(case.call, case.inputs(category.dtype), raise_exception=False)
    three = gradcheck(case.call, case.inputs(category.dtype), three_valued=True, raise_exception=False)
    assert three.status != "fail"
    if category.name in ("float32 sigmoid", "at a kink"):
        assert not torch_like


def test_failing_elements_are_explained() -> None:
    wrong = [c for c in BUGS if c.name == "wrong only for x < -3"][0]
    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong.case.call, wrong.case.inputs(np.float64), three_valued=True)
    verdict = info.value.verdict
    assert info.value.check == "verdict" and verdict.status == "fail"
    worst = verdict.elements[0]
    assert worst.status == "fail" and abs(worst.analytical - worst.numerical) > 10 * worst.error
    text = str(verdict)
    assert "analytical" in text and "numerical" in text and "est. error" in text and "input 0 < -3" in text


def test_kink_reason_names_element_and_distance() -> None:
    x = fg.tensor([0.5, 1e-13, -0.7], requires_grad=True)
    verdict = gradcheck(fg.relu, (x,), three_valued=True)
    assert verdict.status == "inconclusive"
    (element,) = verdict.elements
    assert "input 0 (1,)" in element.where and "kink within the step" in element.reason
    assert "1e-13" in element.reason


def test_second_order_verdict_and_non_differentiable_outputs() -> None:
    x = fg.randn(4, seed=3, requires_grad=True)
    assert gradgradcheck(fg.tanh, (x,), three_valued=True).status == "pass"
    assert gradcheck(lambda t: np.sin(t.data), (x,), three_valued=True, raise_exception=False).status == "fail"
    assert gradcheck(lambda t: fg.ones(3), (x,), three_valued=True).status == "pass"


def test_helper_fails_only_on_fail_and_warns_on_inconclusive() -> None:
    assert assert_grads_correct(fg.sigmoid, np.linspace(-4, 4, 9, dtype=np.float32)).status == "pass"
    with pytest.warns(InconclusiveCheckWarning, match="kink"):
        assert assert_grads_correct(fg.relu, np.array([0.0, 1.0]), order=1).status == "inconclusive"
    wrong = [c for c in BUGS if c.name == "wrong sign"][0]
    with pytest.raises(AssertionError, match="wrong sign"):
        assert_grads_correct(wrong.case.function, *wrong.case.inputs(np.float64))


def test_fast_mode_is_a_tenth_of_slow_mode_on_300_elements() -> None:
    # counted in evaluations of f (timings are in benchmarks/): a probe per block instead of every element
    calls = {False: 0, True: 0}
    x = fg.randn(300, seed=0, requires_grad=True)
    for fast_mode in (False, True):
        def f(t: fg.Tensor, mode: bool = fast_mode) -> fg.Tensor:
            calls[mode] += 1
            return fg.sin(t) * t
        assert gradcheck(f, (x,), three_valued=True, fast_mode=fast_mode).status == "pass"
    assert calls[True] <= 0.1 * calls[False]


class _CubeSeenRows(Function):
    """x**3, 0.5% wrong at element 7 when ``wrong``; counts the grad_output rows its backward sees."""

    rows = 0
    wrong = False

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        _CubeSeenRows.rows += g.data.size // x.data.size
        scale = np.ones(x.shape, x.dtype)
        scale[7] = 1.005 if _CubeSeenRows.wrong else 1.0
        return g * 3 * x * x * fg.tensor(scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fast_mode_sees_a_small_output_beside_large_noisy_ones(dtype) -> None:
    # the probes weight each output by its tolerance: element 7's derivative is 100 times smaller than the
    # others', whose rounding noise would drown its 0.5% bug in a plain projection (float32)
    x = np.full(40, 3.0) + np.linspace(0, 0.1, 40)
    x[7] = 0.3
    _CubeSeenRows.wrong = True
    try:
        for fast_mode in (False, True):
            verdict = gradcheck(_CubeSeenRows.apply, (fg.tensor(x.astype(dtype), requires_grad=True),),
                                three_valued=True, fast_mode=fast_mode, raise_exception=False)
            assert verdict.status == "fail" and "(7,)" in verdict.elements[0].where, str(verdict)
    finally:
        _CubeSeenRows.wrong = False


def test_fast_mode_pass_builds_no_jacobian() -> None:
    # a pass takes a few projections: far fewer grad_output rows than the 300 of the Jacobian
    x = fg.tensor(np.random.default_rng(0).uniform(0.5, 2, 300), requires_grad=True)
    _CubeSeenRows.rows = 0
    assert gradcheck(_CubeSeenRows.apply, (x,), three_valued=True, fast_mode=True).status == "pass"
    assert 0 < _CubeSeenRows.rows <= 100
    _CubeSeenRows.rows = 0
    assert gradcheck(_CubeSeenRows.apply, (x,), three_valued=True).status == "pass"
    assert _CubeSeenRows.rows >= 300


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_an_empty_input_beside_a_checked_one(fast_mode: bool) -> None:
    x, empty = fg.randn(3, seed=1, requires_grad=True), fg.tensor(np.zeros(0), requires_grad=True)
    verdict = gradcheck(lambda a, e: fg.sin(a) + fg.sum(e), (x, empty), three_valued=True, fast_mode=fast_mode)
    assert verdict.status == "pass"


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_subnormal_derivatives_are_no_failure(fast_mode: bool) -> None:
    """d(x*y)/dx = y = 5e-324 (a subnormal) at x = 0: no finite difference resolves it (x*y at x = +-h underflows to
    0) and the relative tolerances underflow too, yet the derivative is right. Found by the README's property test
    under the thorough profile, which failed it; a wrong factor at normal scale beside such values still fails."""
    xs = (np.array([0.0, 1e-310, 3.0]), np.array([5e-324, 2.0, 1e-320]))
    assert assert_grads_correct(fg.mul, *xs, order=2, fast_mode=fast_mode).status == "pass"
    assert gradcheck(fg.mul, tuple(fg.tensor(x, requires_grad=True) for x in xs), fast_mode=fast_mode)

    with pytest.raises(AssertionError, match="fail"):
        assert_grads_correct(MissingFactor, np.array([0.5, 1e-300, 2.0]), fast_mode=fast_mode)


def _sin_in_an_island(t: fg.Tensor) -> fg.Tensor:
    """sin whose sign flips beyond 2e-3 of the checked point (as LAPACK's choice of an SVD's signs can): locally
    smooth, derivative cos x, but both ends of float32's top steps (0.04) lie on the flipped branch."""
    flip = np.where(np.abs(t.data - np.float32([0.3, -0.7, 1.1])) < 2e-3, 1.0, -1.0).astype(t.dtype)
    return fg.sin(t) * fg.tensor(flip)


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_a_jump_beyond_the_smaller_steps_is_no_failure(fast_mode: bool) -> None:
    # float32 linalg_svd failed its right derivative so: the top steps agreed on the flipped branch's -cos x
    x = fg.tensor(np.float32([0.3, -0.7, 1.1]), requires_grad=True)
    verdict = gradcheck(_sin_in_an_island, (x,), three_valued=True, fast_mode=fast_mode, raise_exception=False)
    assert verdict.status == "inconclusive", str(verdict)
    assert "not confirmed from" in verdict.elements[0].reason and "= 0.3" in verdict.elements[0].reason
    assert gradcheck(_sin_in_an_island, (fg.tensor(x.data.astype(np.float64), requires_grad=True),),
                     three_valued=True).status == "pass"  # float64's top step stays within the island


class _SquarePlus(Square):
    """x * x whose derivative is off by ``offset`` (0: right)."""

    offset = 0.0

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (2 * x + _SquarePlus.offset)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_a_vanishing_derivative_of_a_vanishing_function_passes(dtype, fast_mode: bool) -> None:
    # x * x at 0: value and derivative 0, finite differences 0 +- 1e-23; this was "inconclusive: float64 resolution
    # exhausted at this scale", though it is resolved beside how fast x * x moves near 0
    x = fg.tensor(np.array([0.0, 1.0], dtype), requires_grad=True)
    for f in (_SquarePlus.apply, lambda t: fg.sin(t) * t):
        assert gradcheck(f, (x,), three_valued=True, fast_mode=fast_mode).status == "pass"
    _SquarePlus.offset = 1e-6 if dtype == np.float64 else 1e-3  # (float32's backward rounds about 1e-6 of 2)
    try:
        verdict = gradcheck(_SquarePlus.apply, (x,), three_valued=True, fast_mode=fast_mode, raise_exception=False)
    finally:
        _SquarePlus.offset = 0.0
    assert verdict.status == "fail" and any("(0,) w.r.t. input 0 (0,)" in e.where for e in verdict.elements)
    assert "factor" not in str(verdict), str(verdict)  # 2 + 1e-6 at x = 1 is an offset, not "a factor 1"


class _Linear(Function):
    """0.6404 x whose derivative is ``factor`` times the right one."""

    factor = 1.0

    @staticmethod
    def forward(ctx, x):
        return x * 0.6404

    @staticmethod
    def backward(ctx, g):
        return g * 0.6404 * _Linear.factor


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_a_wrong_derivative_at_zero_fails(dtype, fast_mode: bool) -> None:
    # the resolution test's step at x = 0 is subnormal, and so is 0.6404 x there, rounded to a thousandth: the
    # 50% bug was "inconclusive: resolution exhausted", although the estimate 0.6404 +- 3e-16 resolves it
    x = fg.tensor(np.zeros(2, dtype), requires_grad=True)
    assert gradcheck(_Linear.apply, (x,), three_valued=True, fast_mode=fast_mode).status == "pass"
    _Linear.factor = 1.5
    try:
        verdict = gradcheck(_Linear.apply, (x,), three_valued=True, fast_mode=fast_mode, raise_exception=False)
    finally:
        _Linear.factor = 1.0
    assert verdict.status == "fail", str(verdict)


def test_a_nan_input_is_named_as_such() -> None:
    # np.nansum at a NaN element: the reason was "float64 resolution exhausted at this scale (spacing nan)"
    x = fg.tensor([1.0, np.nan, -2.0], requires_grad=True)
    verdict = gradcheck(lambda t: np.nansum(t * t), (x,), three_valued=True, check_undefined_grad=False)
    assert verdict.status == "inconclusive"
    (element,) = verdict.elements
    assert element.where.endswith("input 0 (1,)") and "non-finite input" in element.reason, str(verdict)


def test_nan_derivatives_outside_the_domain_are_no_reentrancy_failure() -> None:
    # sqrt at -1: NaN in both backward runs failed the reentrancy check ("differ by up to nan"); torch passes it
    x = fg.tensor([-1.0], requires_grad=True)
    verdict = gradcheck(fg.sqrt, (x,), three_valued=True, check_undefined_grad=False)
    assert verdict.status == "inconclusive" and not verdict.reasons, str(verdict)
    assert "NaN or infinite about input 0 (0,) = -1" in verdict.elements[0].reason
    with pytest.raises(GradcheckError) as info:
        gradcheck(fg.sqrt, (x,), check_undefined_grad=False)
    assert info.value.check == "jacobian"  # NaN is no match, as torch


_COMPLEX_BUGS = {  # the backward of z * z (right: g * conj(2 z)) and what the diagnosis must say
    "a missing conj()": lambda g, z: g * 2 * z,
    "conjugated: the gradient of input 0": lambda g, z: fg.conj(g * fg.conj(2 * z)),
    "conjugated grad_output": lambda g, z: fg.conj(g) * fg.conj(2 * z),
}


@pytest.mark.parametrize("text", list(_COMPLEX_BUGS))
def test_complex_bugs_are_diagnosed_and_coordinates_explained(text: str) -> None:
    # they were "transposed" and "wrong sign: analytical = -numerical", with coordinates (0, 1) unexplained
    class WronglySquared(Square):
        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return _COMPLEX_BUGS[text](g, z)

    z = fg.tensor(np.array([1 + 2j, -0.5 + 0.3j, 0.7 - 1.1j]), requires_grad=True)
    verdict = gradcheck(WronglySquared.apply, (z,), three_valued=True, raise_exception=False)
    assert verdict.status == "fail" and verdict.diagnosis[0].startswith(f"output 0 w.r.t. input 0: {text}")
    assert "a complex tensor's last coordinate is 0 for the real part, 1 for the imaginary part" in str(verdict)
    with pytest.raises(GradcheckError, match="1 for the imaginary part") as info:
        gradcheck(WronglySquared.apply, (z,))
    assert f"likely causes:\n  - {text}" in str(info.value)


def test_wrong_only_at_second_order_needs_a_passing_first_order() -> None:
    second = Verdict("fail", "second order")
    with_second_order([Verdict("inconclusive", reasons=["a kink within the step"])], second)
    assert not second.diagnosis  # "the first derivatives match" was claimed of an undecided first order
    with_second_order([Verdict("pass")], second)
    assert "wrong only at second order" in second.diagnosis[0]


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_a_derivative_that_is_rounding_beside_others_is_no_failure(fast_mode: bool) -> None:
    # softmax is blind to a[:, 0] after cumsum (it shifts every entry): d(grad a[:, 0])/da[:, 0] comes out of the
    # double backward as rounding, 1e-17, against the finite differences' exact 0; every seed failed
    for seed in range(3):
        a = fg.tensor(np.random.default_rng(seed).standard_normal((3, 3)), requires_grad=True)
        verdict = gradgradcheck(lambda t: fg.softmax(fg.cumsum(t, -1), -1), (a,), three_valued=True,
                                fast_mode=fast_mode)
        assert verdict.status == "pass", str(verdict)


def test_a_pass_resolves_the_element_itself() -> None:
    # a float32 estimate 0.3861 +- 6e-4 (0.16%) passed an analytical 0.3880 (0.5% off): the resolution was measured
    # against |num| + |ana| + the column's largest, three times the element
    rule = _Classifier(float(np.finfo(np.float32).eps))
    ana, num, err = np.array([-0.38804]), np.array([-0.38611]), np.array([6.24e-4])
    passed, failed = rule.split(ana, num, err, rule.scale(ana, np.array([0.5])))
    assert not passed[0] and not failed[0]  # inconclusive: 4 x 0.16% cannot rule out a 0.5% bug
    passed, _ = rule.split(ana, ana * (1 + 1e-4), err / 10, rule.scale(ana, np.array([0.5])))
    assert passed[0]


class _Scaled(Function):
    """x * [1e6, 0.1]: derivatives seven orders apart; the small one is ``factor`` times the right one."""

    factor = 2.0

    @staticmethod
    def forward(ctx, x):
        return x * fg.tensor(np.array([1e6, 0.1], x.dtype))

    @staticmethod
    def backward(ctx, g):
        return g * fg.tensor(np.array([1e6, 0.1 * _Scaled.factor], g.dtype))


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_the_rounding_floor_spares_a_small_derivative_beside_a_large_one(fast_mode: bool) -> None:
    # 16 eps of the largest derivative (1e6) is 1.9 in float32: it may excuse only values both that small
    x = fg.tensor(np.float32([0.5, -0.7]), requires_grad=True)
    verdict = gradcheck(_Scaled.apply, (x,), three_valued=True, fast_mode=fast_mode, raise_exception=False)
    assert verdict.status == "fail" and verdict.elements[0].where.endswith("input 0 (1,)"), str(verdict)


# False fails found by fuzzing float32 compositions of right rules: the first-order gradient is a difference of terms
# far larger than itself, so its rounding is far coarser than eps times its size (the finite differences saw a flat
# function, 0 ± 1e-11, and the double backward's own rounding, 6e-8, looked like a wrong derivative). The judge now
# measures the rounding both sides realize against the same computation at float64 copies of the inputs.
@pytest.mark.parametrize(("func", "values"), [
    (lambda x: fg.tanh(x) - x, [-0.00021452399960253388, -0.00032913126051425934]),
    (lambda x: x * x - x * x * 1.0001, [103.20430755615234, 143.04815673828125, 124.40888214111328, 75.54071807861328]),
    (lambda x: fg.sin(x) - x, [3e-4, -2e-4, 5e-4]),
    (lambda x: x * fg.exp(x) - x, [1e-3, -2e-3, 4e-4]),
    (lambda x: fg.log(x) - fg.log(x + 1e-3), [0.7, 1.3, 2.1]),
], ids=["tanh(x) - x", "x*x - x*x*1.0001", "sin(x) - x", "x exp(x) - x", "log(x) - log(x + 1e-3)"])
def test_cancellation_in_float32_is_no_failure(func, values) -> None:
    x = fg.tensor(np.array(values, np.float32), requires_grad=True)
    assert gradgradcheck(func, (x,), three_valued=True, raise_exception=False).status != "fail"
    assert gradgradcheck(func, (x.double().detach().requires_grad_(),), three_valued=True).status != "fail"
