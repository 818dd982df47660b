"""Forward-mode AD: dual tensors, their nesting with reverse mode, custom Function jvp, in-place ops."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.autograd import Function
from funcgrad.autograd import forward_ad as fwAD
from funcgrad.core.structured import identity_seed
from funcgrad.ops import jvp
from tests.budget import examples
from tests.check.corpus import Exp, SumOneDirection

X0 = np.array([0.3, -1.2, 0.8])


# ----- make_dual / unpack_dual ------------------------------------------------------------------
def test_unpack_dual_returns_primal_and_tangent() -> None:
    with fwAD.dual_level():
        dual = fwAD.make_dual(fg.tensor(X0), np.ones(3))
        primal, tangent = fwAD.unpack_dual(fg.exp(dual))
    np.testing.assert_allclose(primal.data, np.exp(X0))
    np.testing.assert_allclose(tangent.data, np.exp(X0))
    assert fwAD.unpack_dual(primal).tangent is None


def test_make_dual_casts_a_narrower_tangent_to_the_primal_dtype() -> None:
    with fwAD.dual_level():
        dual = fwAD.make_dual(fg.tensor(X0), np.array([0.1, 0.2, 0.3], np.float32))
        assert fwAD.unpack_dual(dual).tangent.dtype == np.float64
        assert fwAD.unpack_dual(dual * 3.0).tangent.dtype == np.float64  # as torch: tangents compute in float64
        wide = fwAD.make_dual(fg.tensor(X0.astype(np.float32)), np.ones(3))
        assert fwAD.unpack_dual(wide).tangent.dtype == np.float64  # a wider tangent is kept, as torch


def test_make_dual_checks_the_tangent_shape() -> None:
    with fwAD.dual_level(), pytest.raises(ValueError, match="different size"):
        fwAD.make_dual(fg.tensor(X0), np.ones(4))


def test_make_dual_needs_a_level() -> None:
    with pytest.raises(RuntimeError, match="dual_level"):
        fwAD.make_dual(fg.tensor(X0), np.ones(3))


def test_set_tangent_gives_the_tensor_itself_its_tangent() -> None:
    """funcgrad's extension for a Tensor its caller owns: no view is made, the tangent flows and is checked as
    make_dual's, and it is dropped when the level exits."""
    x = fg.tensor(X0, requires_grad=True)
    with fwAD.dual_level():
        assert fwAD.set_tangent(x, np.array([1.0, 2.0, 3.0], np.float32)) is x
        assert fwAD.unpack_tangent(x).dtype == np.float64
        y = fg.exp(x)
        np.testing.assert_allclose(fwAD.unpack_tangent(y).data, np.exp(X0) * [1.0, 2.0, 3.0])
        (g,) = fg.autograd.grad(y.sum(), x)  # forward over reverse, with x itself the input
        np.testing.assert_allclose(fwAD.unpack_tangent(g).data, np.exp(X0) * [1.0, 2.0, 3.0])
        with pytest.raises(ValueError, match="different size"):
            fwAD.set_tangent(fg.tensor(X0), np.ones(4))
    assert fwAD.unpack_tangent(x) is None and x.grad_fn is None


def test_unpack_tangent_is_unpack_duals_tangent() -> None:
    assert fwAD.unpack_tangent(fg.tensor(X0)) is None  # no level
    with fwAD.dual_level():
        batch = fwAD.make_dual(fg.tensor(X0), identity_seed((3,), np.float64))
        y = batch * 2.0  # a structured batch of tangents: made dense, as unpack_dual does
        np.testing.assert_array_equal(fwAD.unpack_tangent(y).data, fwAD.unpack_dual(y).tangent.data)
        np.testing.assert_array_equal(fwAD.unpack_tangent(y).data, 2.0 * np.eye(3))
        assert type(fwAD.unpack_tangent(y).data) is np.ndarray
        assert fwAD.unpack_tangent(fg.tensor(X0)) is None


def test_tangents_are_dropped_when_the_level_exits() -> None:
    with fwAD.dual_level():
        y = fg.sin(fwAD.make_dual(fg.tensor(X0), np.ones(3)))
        assert fwAD.unpack_dual(y).tangent is not None
    assert fwAD.unpack_dual(y).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(y).tangent is None
        assert fwAD.unpack_dual(y * 2).tangent is None


def test_integer_results_get_no_tangent() -> None:
    with fwAD.dual_level():
        dual = fwAD.make_dual(fg.tensor(X0), np.ones(3))
        assert fwAD.unpack_dual(fg.argmax(dual)).tangent is None
        assert fwAD.unpack_dual(dual > 0).tangent is None


def test_a_dual_tensor_may_require_grad() -> None:
    x = fg.tensor(X0, requires_grad=True)
    with fwAD.dual_level():
        y = fg.sum(fg.exp(fwAD.make_dual(x, np.ones(3))))
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.data, np.exp(X0).sum())
        y.backward()
    np.testing.assert_allclose(x.grad.data, np.exp(X0))


def test_reverse_over_forward_differentiates_a_tangent() -> None:
    """d/dx <t, d sin(x)> = -sin(x) t."""
    x, t = fg.tensor(X0, requires_grad=True), np.array([1.0, 2.0, -1.0])
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fg.sin(fwAD.make_dual(x, t))).tangent
        (grad,) = fg.autograd.grad(fg.sum(tangent), x)
    np.testing.assert_allclose(grad.data, -np.sin(X0) * t)



def test_a_level_that_does_not_record_tangents_gives_the_same_tangents_unrecorded() -> None:
    """``dual_level(record_tangents=False)``: the tangents equal those of a recording level, and a tangent of a
    value that requires grad does not (the rules ran on arrays); a recording level's does."""
    x, t = fg.tensor(X0, requires_grad=True), np.array([1.0, 2.0, -1.0])
    tangents = {}
    for record in (True, False):
        with fwAD.dual_level(record_tangents=record):
            y = fg.sum(fg.sin(fwAD.make_dual(x, t)) * x)
            tangents[record] = fwAD.unpack_dual(y).tangent
            assert y.requires_grad
    assert tangents[True].requires_grad and not tangents[False].requires_grad
    np.testing.assert_allclose(tangents[False].data, tangents[True].data, rtol=1e-15)
    np.testing.assert_allclose(tangents[False].data, np.sum(np.cos(X0) * X0 * t))  # x itself carries no tangent


def test_jvp_rules_on_arrays_and_on_tensors_agree() -> None:
    """Without grad, a rule runs on arrays (``ForwardLayer._on_arrays``); with grad on inputs that require it, on
    Tensors: the tangents agree, batched or not, real or complex."""
    rng = np.random.default_rng(0)
    for value, tangent in ((X0, rng.normal(size=(4, 3))), (X0 * (1 + 0.5j), rng.normal(size=3) + 1j)):
        results = []
        for requires_grad in (False, True):
            with fwAD.dual_level():
                x = fwAD.make_dual(fg.tensor(value, requires_grad=requires_grad), tangent)
                y = fg.exp(x) * x ** 3 / (1 + x * x) + fg.sum(x)
                results.append(fwAD.unpack_dual(y).tangent)
        assert not results[0].requires_grad and results[1].requires_grad
        np.testing.assert_allclose(results[0].data, results[1].data, rtol=1e-13)


# ----- forward-over-reverse Hessians --------------------------------------------------------------
UNARY: dict[str, Callable[[Any], Any]] = {
    "sin": fg.sin, "tanh": fg.tanh, "exp": lambda x: fg.exp(x * 0.5), "square": fg.square,
    "softplus": lambda x: fg.log1p(fg.exp(x)), "sigmoid": fg.sigmoid,
    "softmax": lambda x: fg.softmax(x, -1), "cumprod": lambda x: fg.cumprod(x, 0),
    "matvec": lambda x: fg.tensor(np.arange(9.0).reshape(3, 3) / 9) @ x, "flip": lambda x: fg.flip(x, 0),
    "outer": lambda x: fg.sum(fg.outer(x, x), 0), "norm": lambda x: x * fg.norm(x),
    "getitem": lambda x: fg.cat([x[1:], x[:1] * x[2:]]),
}


def _hessian_forward_over_reverse(f: Callable[[Any], Any], x0: np.ndarray, create_graph: bool) -> np.ndarray:
    """Inside a dual level the backward rules run on Tensors, so the gradient carries its tangent whether
    or not the backward pass is recorded."""
    with fwAD.dual_level():
        x = fwAD.make_dual(fg.tensor(x0, requires_grad=True), np.eye(x0.size))
        (g,) = fg.autograd.grad(f(x), x, create_graph=create_graph)
        assert g.requires_grad == create_graph
        return fwAD.unpack_dual(g).tangent.data


def _hessian_reverse_over_reverse(f: Callable[[Any], Any], x0: np.ndarray) -> np.ndarray:
    x = fg.tensor(x0, requires_grad=True)
    (g,) = fg.autograd.grad(f(x), x, create_graph=True)
    return np.stack([fg.autograd.grad(g[i], x, retain_graph=True)[0].data for i in range(x0.size)])


@settings(max_examples=examples(25), deadline=None)
@given(st.lists(st.sampled_from(sorted(UNARY)), min_size=1, max_size=4),
       st.lists(st.integers(-15, 14).map(lambda i: i / 10 + 0.05), min_size=3, max_size=3),  # no 0, no subnormals
       st.booleans())
def test_forward_over_reverse_hessians_equal_reverse_over_reverse(chain: list[str], values: list[float],
                                                                   create_graph: bool) -> None:
    def f(x: Any) -> Any:
        for name in chain:
            x = UNARY[name](x)
        return fg.sum(x * x)

    x0 = np.array(values)
    y = fg.tensor(x0)
    for name in chain:  # squaring steps (square, outer, norm) nest: keep every value, so exp of it, finite
        y = UNARY[name](y)
        assume(np.abs(y.data).max() < 100)
    expected = _hessian_reverse_over_reverse(f, x0)
    assert np.isfinite(expected).all()  # (NaN == NaN would pass vacuously)
    np.testing.assert_allclose(_hessian_forward_over_reverse(f, x0, create_graph), expected, rtol=1e-9, atol=1e-9)


def test_batched_hessian_pushes_all_directions_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Hessian of sum(log1p(exp(A x))) + x.x/2 is A^T diag(s (1 - s)) A + I, s = sigmoid(A x); no op
    on the way falls back to a loop over the 128 directions."""
    def no_loop(*args: Any) -> Any:
        raise AssertionError("a batch of tangents went through an op one direction at a time")

    monkeypatch.setattr(jvp, "_linear_jvp", no_loop)
    rng = np.random.default_rng(0)
    A, x0 = rng.normal(size=(512, 128)) / 10, rng.normal(size=128)
    A_t = fg.tensor(A)
    H = _hessian_forward_over_reverse(lambda x: fg.sum(fg.log1p(fg.exp(A_t @ x))) + 0.5 * (x @ x), x0, False)
    s = 1 / (1 + np.exp(-(A @ x0)))
    np.testing.assert_allclose(H, A.T @ (A * (s * (1 - s))[:, None]) + np.eye(128), rtol=1e-10, atol=1e-12)


# ----- custom Functions -----------------------------------------------------------------------------
class Cube(Function):
    @staticmethod
    def forward(ctx: Any, x: Any, k: float) -> Any:
        ctx.save_for_backward(x)
        ctx.k = k
        return k * x ** 3

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return 3 * ctx.k * g * x ** 2, None

    @staticmethod
    def jvp(ctx: Any, x_t: Any, k_t: Any) -> Any:
        (x,) = ctx.saved_tensors
        assert k_t is None  # not a tensor
        return 3 * ctx.k * x ** 2 * x_t


class NoJvp(Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x * 2

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return g * 2


def test_custom_function_jvp() -> None:
    with fwAD.dual_level():
        y = Cube.apply(fwAD.make_dual(fg.tensor(X0), np.ones(3)), 2.0)
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.data, 6 * X0 ** 2)
        batched = Cube.apply(fwAD.make_dual(fg.tensor(X0), np.eye(3)), 2.0)
        np.testing.assert_allclose(fwAD.unpack_dual(batched).tangent.data, np.diag(6 * X0 ** 2))


def test_custom_function_jvp_composes_with_reverse_mode() -> None:
    x = fg.tensor(X0, requires_grad=True)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(Cube.apply(fwAD.make_dual(x, np.ones(3)), 1.0)).tangent
        (grad,) = fg.autograd.grad(fg.sum(tangent), x)
    np.testing.assert_allclose(grad.data, 6 * X0)


def test_custom_function_without_jvp_raises_under_forward_ad() -> None:
    NoJvp.apply(fg.tensor(X0))  # fine outside forward mode
    with fwAD.dual_level(), pytest.raises(NotImplementedError, match="NoJvp.*static method jvp"):
        NoJvp.apply(fwAD.make_dual(fg.tensor(X0), np.ones(3)))


# ----- views and in-place operations ----------------------------------------------------------------
def test_views_carry_the_matching_part_of_the_tangent() -> None:
    t = np.arange(6.0).reshape(2, 3)
    with fwAD.dual_level():
        dual = fwAD.make_dual(fg.tensor(np.ones((2, 3))), t)
        np.testing.assert_allclose(fwAD.unpack_dual(dual.T[1:]).tangent.data, t.T[1:])
        np.testing.assert_allclose(fwAD.unpack_dual(dual.reshape(3, 2)).tangent.data, t.reshape(3, 2))


@pytest.mark.parametrize("requires_grad", [False, True])
def test_inplace_ops_update_the_tangent(requires_grad: bool) -> None:
    with fwAD.dual_level():
        y = fwAD.make_dual(fg.tensor(X0, requires_grad=requires_grad), np.ones(3)) * 1.0
        y.mul_(y)
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.data, 2 * X0)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_inplace_on_a_view_updates_base_and_view_tangents(batch: tuple[int, ...]) -> None:
    t = np.arange(3.0) + np.zeros(batch + (3,))
    with fwAD.dual_level():
        z = fwAD.make_dual(fg.tensor(X0), t) * 1.0
        v = z[1:]
        v.mul_(3.0)
        np.testing.assert_allclose(fwAD.unpack_dual(z).tangent.data, t * [1.0, 3.0, 3.0])
        np.testing.assert_allclose(fwAD.unpack_dual(v).tangent.data, 3 * t[..., 1:])
        w = fg.zeros(3)
        w[1:] = fwAD.make_dual(fg.tensor(X0[:2]), t[..., :2])
        np.testing.assert_allclose(fwAD.unpack_dual(w).tangent.data, np.concatenate(
            [np.zeros(batch + (1,)), t[..., :2]], -1))


def test_forward_ad_composes_with_other_dispatch_layers() -> None:
    """A JVP rule's own ops bypass the forward layer only: the profiler still sees them, and the layers
    are reinstalled in their order afterwards."""
    from funcgrad.autograd.profiler import profile
    from funcgrad.core import dispatch

    x = fg.tensor([0.5, 1.5])
    with profile() as prof, fwAD.dual_level():
        layers = list(dispatch.DISPATCH.layers)
        y = fg.sin(fwAD.make_dual(x, fg.ones(2))) * 3.0
        tangent = fwAD.unpack_dual(y).tangent
        assert dispatch.DISPATCH.layers == layers and dispatch.DISPATCH.tensor_gradients
    np.testing.assert_allclose(tangent.data, 3.0 * np.cos(x.data))
    names = [e.name for e in prof.events()]
    assert names.count("cos") == 1 and "sin" in names  # cos: the JVP rule of sin, run plainly
    assert not dispatch.DISPATCH.active and not dispatch.DISPATCH.tensor_gradients


def test_forward_over_reverse_leaves_no_reference_cycles() -> None:
    """Saved outputs carry tangents on detached holders and dispatch layers chain without self-referring
    closures: the memory of a pass goes when it ends, not at the next cyclic collection."""
    import gc

    A = fg.tensor(np.arange(12.0).reshape(4, 3) / 12)
    x, v = fg.tensor([0.1, -0.2, 0.3]), fg.tensor([1.0, 0.0, 2.0])

    def f(x: Any) -> Any:
        return fg.sum(fg.log1p(fg.exp(A @ x))) + 0.5 * (x @ x)

    gc.collect()
    gc.disable()
    try:
        fg.functional.hvp(f, x, v)
        fg.functional.hessian(f, x, vectorize=True, outer_jacobian_strategy="forward-mode")
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_forward_over_reverse_through_a_function_that_saves_its_output() -> None:
    """The saved output carries the tangent its jvp gave, so backward's ``g * out`` has the right tangent."""
    class ExpWithJvp(Exp):  # the corpus's Exp (saves its output) with a forward-mode rule
        @staticmethod
        def jvp(ctx: Any, x_t: Any) -> Any:
            return x_t * ctx.saved_tensors[0].detach()

    x0 = np.array([0.3, -0.7])
    H = _hessian_forward_over_reverse(lambda x: fg.sum(ExpWithJvp.apply(x * x)), x0, False)
    np.testing.assert_allclose(H, _hessian_reverse_over_reverse(lambda x: fg.sum(fg.exp(x * x)), x0), rtol=1e-12)


class _SplitOneDirection(Function):
    """(x[0] * x[1], x * 2) with a jvp that indexes its tangent: with a batch it raises or picks directions."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x[0] * x[1], x * 2

    @staticmethod
    def backward(ctx, g0, g1):
        (x,) = ctx.saved_tensors
        return fg.stack([g0 * x[1], g0 * x[0]]) + 2 * g1

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return t.reshape(2)[0] * x[1] + x[0] * t.reshape(2)[1], None if t.shape != (2,) else t * 2


def test_function_jvp_written_for_one_tangent_is_pushed_one_direction_at_a_time():
    x = np.array([0.5, -1.5])
    # a batch-losing jvp used to broadcast one tangent over every direction: a wrong Jacobian, silently
    np.testing.assert_allclose(np.asarray(fg.func.jacfwd(lambda v: SumOneDirection.apply(v) * v)(x)),
                               np.full((2, 2), x[:, None]) + x.sum() * np.eye(2))
    np.testing.assert_allclose(np.asarray(fg.func.jacfwd(SumOneDirection.apply)(x)), [1.0, 1.0])
    first, second = fg.func.jacfwd(_SplitOneDirection.apply)(x)
    np.testing.assert_allclose(np.asarray(first), [x[1], x[0]])
    np.testing.assert_allclose(np.asarray(second), 2 * np.eye(2))
    _, tangent = fg.func.jvp(lambda v: SumOneDirection.apply(v) * v, (x,), (np.array([1.0, 2.0]),))
    np.testing.assert_allclose(np.asarray(tangent), 3 * x + x.sum() * np.array([1.0, 2.0]))


class _TimesSum(Function):
    """``x * sum(x)`` with a jvp for one tangent, ``t sum(x) + x sum(t)``: handed a batch of tangents it keeps the
    batch's shape (its first term has it) while ``sum(t)`` mixes the directions."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x.sum()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.sum() + fg.sum(g * x)

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return t * x.sum() + x * t.sum()


def test_function_jvp_keeping_the_batch_shape_still_gets_one_direction_at_a_time():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    expected = x.sum() * np.eye(4) + x[:, None]  # d(x_i sum(x)) / dx_j = [i=j] sum(x) + x_i
    np.testing.assert_allclose(np.asarray(fg.func.jacfwd(_TimesSum.apply)(x)), expected)
    np.testing.assert_allclose(np.asarray(fg.func.jacrev(_TimesSum.apply)(x)), expected)


class _Double(Function):
    """``2 x``, the forward and backward of the jvps below."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class _CachingJvp(_Double):
    """``2 x`` with a jvp that keeps its result on ctx, as a jvp may under torch, which calls it once per forward."""

    @staticmethod
    def jvp(ctx, t):
        if not hasattr(ctx, "tangent"):
            ctx.tangent = t * 2
        return ctx.tangent


def test_function_jvp_writing_on_ctx_gets_a_fresh_ctx_per_direction():
    # the second direction used to read the first one's cached tangent: jacfwd gave [[2, 0], [2, 0]], silently
    np.testing.assert_allclose(np.asarray(fg.func.jacfwd(_CachingJvp.apply)(np.array([0.5, -1.5]))), 2 * np.eye(2))
    _, tangent = fg.func.jvp(_CachingJvp.apply, (np.array([0.5, -1.5]),), (np.array([1.0, 3.0]),))
    np.testing.assert_allclose(np.asarray(tangent), [2.0, 6.0])


class _BatchShapedJvp(_Double):
    """``2 x`` with a jvp returning two stacked copies of the tangent: a batch's shape for one direction."""

    @staticmethod
    def jvp(ctx, t):
        return fg.stack([t * 2, t * 2])


@pytest.mark.parametrize("transform", ["jvp", "jacfwd"])
def test_function_jvp_with_an_extra_leading_dim_is_refused(transform):
    # one direction's tangent of shape (2, 3) for an output of shape (3,) used to pass as a batch of two
    x = np.array([0.5, -1.5, 2.0])
    with pytest.raises(RuntimeError, match=r"_BatchShapedJvp.jvp returned a tangent of shape \[2, 3\] for output 0 "
                                           r"of shape \[3\]"):
        if transform == "jvp":
            fg.func.jvp(_BatchShapedJvp.apply, (x,), (np.ones(3),))
        else:
            fg.func.jacfwd(_BatchShapedJvp.apply)(x)
