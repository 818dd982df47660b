"""Custom ``Function``: the seeds' examples, ctx bookkeeping, double backward and every error."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.signal
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

import funcgrad as fg
from funcgrad.autograd.function import Function, once_differentiable
from funcgrad.check import GradcheckError, gradcheck, gradgradcheck
from tests.budget import examples
from tests.check.corpus import Exp, Product


def leaf(*shape: int, seed: int = 0, dtype: type = np.float64) -> fg.Tensor:
    return fg.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype), requires_grad=True)


# ----- the seeds' examples (Exp lives in the check corpus, shared with the checker's tests) ---------
class GradCoeff(Function):
    @staticmethod
    def forward(ctx, x, coeff):
        ctx.coeff = coeff
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * ctx.coeff, None


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        out = 1 / (1 + fg.exp(-x))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out * (1 - out)


class Correlate2d(Function):
    """out = correlate2d(x, w, "valid"): a 2-D cross-correlation with a learnable kernel."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return fg.tensor(scipy.signal.correlate2d(x.data, w.data, mode="valid"))

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = ConvolveFull.apply(g, w) if ctx.needs_input_grad[0] else None  # g: (H-kh+1, W-kw+1) -> (H, W)
        gw = Correlate2d.apply(x, g) if ctx.needs_input_grad[1] else None   # -> (kh, kw)
        return gx, gw


class ConvolveFull(Function):
    """out = convolve2d(g, w, "full"): the transpose of Correlate2d in x, itself differentiable."""

    @staticmethod
    def forward(ctx, g, w):
        ctx.save_for_backward(g, w)
        return fg.tensor(scipy.signal.convolve2d(g.data, w.data, mode="full"))

    @staticmethod
    def backward(ctx, h):
        g, w = ctx.saved_tensors
        return Correlate2d.apply(h, w), Correlate2d.apply(h, g)


def test_exp_records_a_named_node_and_passes_gradcheck_and_gradgradcheck():
    x = leaf(3, 2)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward" and type(y.grad_fn).__name__ == "ExpBackward"
    assert y.grad_fn.next_functions == ((x._edge()[0], 0),)
    assert type(Exp.apply(x).grad_fn) is type(y.grad_fn)  # one node class per Function
    np.testing.assert_allclose(y.data, np.exp(x.data))
    assert gradcheck(Exp.apply, (x,))
    assert gradgradcheck(Exp.apply, (x,))


def test_exp_inside_a_graph_of_built_in_ops():
    x = leaf(4)
    y = (Exp.apply(x * 2) * x).sum()
    assert y.grad_fn.next_functions[0][0].next_functions[0][0].name() == "ExpBackward"
    y.backward()
    np.testing.assert_allclose(x.grad.data, np.exp(2 * x.data) * (2 * x.data + 1))


def test_grad_coeff_non_tensor_argument_gets_none():
    x = leaf(3)
    y = GradCoeff.apply(x, 5.0)
    assert y.grad_fn.next_functions[1] == (None, 0)
    assert y.grad_fn.needs_input_grad == (True, False)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, np.full(3, 5.0))


@pytest.mark.filterwarnings("ignore:input 0 requires grad and is float32")
def test_sigmoid_gradcheck_depends_on_eps_and_dtype():
    x32 = leaf(5, seed=3, dtype=np.float32)
    assert gradcheck(Sigmoid.apply, (x32,), eps=1e-3)
    with pytest.raises(GradcheckError):
        gradcheck(Sigmoid.apply, (x32,), eps=1e-4)
    x64 = leaf(5, seed=3)
    assert gradcheck(Sigmoid.apply, (x64,), eps=1e-4)
    assert gradcheck(Sigmoid.apply, (x64,), eps=1e-6)
    np.testing.assert_allclose(Sigmoid.apply(x64).data, fg.sigmoid(x64).data)


def test_correlate2d_with_a_learnable_kernel():
    x, w = leaf(5, 6, seed=1), leaf(3, 2, seed=2)
    out = Correlate2d.apply(x, w)
    assert out.shape == (3, 5)
    assert gradcheck(Correlate2d.apply, (x, w))
    assert gradgradcheck(Correlate2d.apply, (x, w))


def test_correlate2d_double_backward_records_its_own_functions():
    x, w = leaf(4, 4, seed=1), leaf(2, 2, seed=2)
    (gx, gw) = fg.autograd.grad(Correlate2d.apply(x, w).sum(), (x, w), create_graph=True)
    assert gx.grad_fn.name() == "ConvolveFullBackward" and gw.grad_fn.name() == "Correlate2dBackward"


# ----- outputs ------------------------------------------------------------------------------------
class SinCos(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.sin(x), fg.cos(x), "a label"

    @staticmethod
    def backward(ctx, g_sin, g_cos, g_label):
        (x,) = ctx.saved_tensors
        ctx.seen = (g_sin, g_cos, g_label)
        return g_sin * fg.cos(x) - g_cos * fg.sin(x)


def test_multiple_outputs_with_a_non_tensor_one():
    x = leaf(3)
    s, c, label = SinCos.apply(x)
    assert label == "a label"
    assert (s.output_nr, c.output_nr) == (0, 1) and s.grad_fn is c.grad_fn
    assert gradcheck(lambda t: SinCos.apply(t)[:2], (x,))
    assert gradgradcheck(lambda t: SinCos.apply(t)[:2], (x,))


def test_unused_output_gets_zeros_by_default():
    x = leaf(3)
    s, c, _ = SinCos.apply(x)
    node = s.grad_fn
    s.sum().backward()
    g_sin, g_cos, g_label = node.seen
    np.testing.assert_array_equal(g_cos.data, np.zeros(3))
    assert g_label is None
    np.testing.assert_allclose(x.grad.data, np.cos(x.data))


class SinCosNoMaterialize(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return fg.sin(x), fg.cos(x)

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        ctx.seen = (g_sin, g_cos)
        return g_sin if g_cos is None else g_sin + g_cos


def test_set_materialize_grads_false_gives_none():
    x = leaf(3)
    s, _ = SinCosNoMaterialize.apply(x)
    node = s.grad_fn
    s.sum().backward()
    assert node.seen[1] is None
    np.testing.assert_array_equal(x.grad.data, np.ones(3))


class ValueAndSign(Function):
    @staticmethod
    def forward(ctx, x, materialize):
        ctx.set_materialize_grads(materialize)
        sign = fg.sign(x)
        ctx.mark_non_differentiable(sign)
        return x * 2, sign

    @staticmethod
    def backward(ctx, g, g_sign):
        ctx.seen = g_sign
        return g * 2, None


@pytest.mark.parametrize("materialize", [True, False])
def test_mark_non_differentiable(materialize):
    x = leaf(3)
    value, sign = ValueAndSign.apply(x, materialize)
    assert value.requires_grad and not sign.requires_grad and sign.grad_fn is None
    node = value.grad_fn
    value.sum().backward()
    if materialize:
        np.testing.assert_array_equal(node.seen.data, np.zeros(3))
    else:
        assert node.seen is None
    np.testing.assert_array_equal(x.grad.data, np.full(3, 2.0))


class PassThrough(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a, b

    @staticmethod
    def backward(ctx, ga, gb):
        return ga * 3, gb * 3


def test_outputs_that_are_inputs_are_aliases_with_the_function_as_history():
    a, b = leaf(2), fg.tensor([1.0, 2.0])
    out_a, out_b = PassThrough.apply(a, b)
    assert out_a is not a and out_a._base is a and out_a._version_counter is a._version_counter
    assert out_a.grad_fn.name() == "PassThroughBackward" and out_b.requires_grad  # as torch
    assert a.grad_fn is None and not b.requires_grad  # the inputs themselves are untouched
    (out_a + out_b).sum().backward()
    np.testing.assert_array_equal(a.grad.data, np.full(2, 3.0))


def test_no_input_requires_grad_records_nothing():
    out = Exp.apply(fg.tensor([0.0, 1.0]))
    assert out.grad_fn is None and not out.requires_grad
    x = leaf(2)
    with fg.no_grad():
        assert Exp.apply(x).grad_fn is None


# ----- needs_input_grad, kwargs, setup_context ----------------------------------------------------
class Affine(Function):
    @staticmethod
    def forward(ctx, x, w, *, bias=None, scale=1.0):
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        ctx.needs = ctx.needs_input_grad
        out = x * w * scale
        return out if bias is None else out + bias

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = g * w * ctx.scale if ctx.needs_input_grad[0] else None
        gw = g * x * ctx.scale if ctx.needs_input_grad[1] else None
        gb = g if len(ctx.needs_input_grad) > 2 and ctx.needs_input_grad[2] else None
        return gx, gw, gb, None


def test_needs_input_grad_and_keyword_tensor_arguments():
    x, w, b = leaf(3, seed=1), fg.tensor([1.0, 2.0, 3.0]), leaf(3, seed=2)
    y = Affine.apply(x, w, scale=2.0, bias=b)  # keywords follow forward's parameter order: bias, scale
    node = y.grad_fn
    assert node.needs == node.needs_input_grad == (True, False, True, False)
    assert [fn is None for fn, _ in node.next_functions] == [False, True, False, True]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, w.data * 2.0)
    np.testing.assert_allclose(b.grad.data, np.ones(3))
    assert gradcheck(lambda x, b: Affine.apply(x, w, bias=b, scale=0.5), (x, b))


def test_needs_input_grad_is_all_false_without_grad_mode():
    x = leaf(3)
    with fg.no_grad():
        y = Affine.apply(x, x)
    assert not y.requires_grad


class Power(Function):
    @staticmethod
    def forward(x, p=3.0):
        return x ** p

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, p = inputs
        ctx.save_for_backward(x)
        ctx.p = p

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.p * x ** (ctx.p - 1), None


def test_setup_context_style_with_defaults_and_keywords():
    x = leaf(3)
    assert Power.apply(x).grad_fn.p == 3.0  # defaults are bound, as torch
    assert Power.apply(x, p=2.0).grad_fn.next_functions[1] == (None, 0)
    assert gradcheck(Power.apply, (x,))
    assert gradgradcheck(lambda t: Power.apply(t, p=2.5), (fg.tensor(np.abs(x.data) + 0.5, requires_grad=True),))
    with pytest.raises(TypeError, match="Power.apply"):
        Power.apply(x, q=2.0)


# ----- mark_dirty ---------------------------------------------------------------------------------
class MulTwo_(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


class Exp_(Function):
    @staticmethod
    def forward(ctx, x):
        x.exp_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out


def test_mark_dirty_rebases_the_input():
    a = leaf(3)
    b = a.clone()
    clone_node = b.grad_fn
    out = MulTwo_.apply(b)
    assert out is b and b.grad_fn.name() == "MulTwo_Backward"
    assert b.grad_fn.next_functions == ((clone_node, 0),)
    assert b._version == 2  # one for mul_, one for mark_dirty, as torch
    np.testing.assert_allclose(b.data, 2 * a.data)
    (b * b).sum().backward()
    np.testing.assert_allclose(a.grad.data, 8 * a.data)


def test_mark_dirty_with_the_result_saved_supports_double_backward():
    x = leaf(3)
    assert gradcheck(lambda t: Exp_.apply(t.clone()), (x,))
    assert gradgradcheck(lambda t: Exp_.apply(t.clone()), (x,))


def test_mark_dirty_invalidates_earlier_saves():
    a = leaf(3)
    b = a.clone()
    y = b * b  # saves b at version 0
    MulTwo_.apply(b)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*expected version 0"):
        y.sum().backward()


def test_mark_dirty_on_a_leaf_that_requires_grad():
    a = leaf(3)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        MulTwo_.apply(a)
    with fg.no_grad():  # the optimizer-update case
        assert MulTwo_.apply(a) is a
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad .or a view of one"):
        MulTwo_.apply(fg.reshape(a, (3, 1)))
    y = a * 1
    with fg.no_grad():
        view = y[1:]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad .or a view of one"):
        MulTwo_.apply(view)  # made under no_grad, the view has no history of its own to rewrite


class WeightedScale_(Function):
    """x *= w in place (x marked dirty), given the dirty x as its second input."""

    @staticmethod
    def forward(ctx, w, x):
        ctx.save_for_backward(w, x)
        x.mul_(w)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        w, out = ctx.saved_tensors
        return (g * out / w).sum(), g * w


@pytest.mark.parametrize("through", ["base", "view"])
def test_mark_dirty_on_a_view_rewrites_the_base_history(through: str) -> None:
    x = leaf(4)
    y = x * 1
    view = y[1:3]
    out = MulTwo_.apply(view)
    assert out is view and view._base is y and view._version == y._version
    assert y.grad_fn.name() == "CopySlicesBackward0"
    np.testing.assert_allclose(y.data, x.data * [1, 2, 2, 1])
    weights = fg.tensor([1.0, 10.0, 100.0, 1000.0])
    loss = (y * weights).sum() if through == "base" else (view * weights[1:3]).sum()
    loss.backward()
    expected = [1.0, 20.0, 200.0, 1000.0] if through == "base" else [0.0, 20.0, 200.0, 0.0]
    np.testing.assert_allclose(x.grad.data, expected)


def test_mark_dirty_on_a_view_that_is_not_the_first_input_and_whose_base_needs_no_grad() -> None:
    w = fg.tensor(3.0, requires_grad=True)
    x = leaf(4)
    y = x * 1
    WeightedScale_.apply(w, y[::2])
    (y * y).sum().backward()  # y = x * [w, 1, w, 1]
    data = x.data
    np.testing.assert_allclose(x.grad.data, 2 * data * [9.0, 1.0, 9.0, 1.0])
    np.testing.assert_allclose(w.grad.data, 2 * 3.0 * (data[0] ** 2 + data[2] ** 2))
    base = fg.zeros(4) + 1.0
    w.grad = None
    WeightedScale_.apply(w, base[1:])  # the base needs no grad: it gets a history through the Function
    assert base.requires_grad and base.grad_fn.name() == "CopySlicesBackward0"
    base.sum().backward()
    assert w.grad.item() == 3.0


def test_mark_dirty_on_a_view_passes_gradcheck() -> None:
    def f(w, x):
        y = x * 1
        WeightedScale_.apply(w, y[1:])
        return y.exp()

    inputs = (fg.tensor(0.7, requires_grad=True), leaf(3))
    assert gradcheck(f, inputs) and gradgradcheck(f, inputs)


class Twice_(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x, x * 1

    @staticmethod
    def backward(ctx, g, h):
        return g * 2 + h * 2


def test_mark_dirty_on_views_pytorch_refuses() -> None:
    y = leaf(4) * 1
    with pytest.raises(RuntimeError, match="If your Function modifies inplace an input that is a view of another "
                                           "Tensor, your Function cannot return more than one Tensor"):
        Twice_.apply(y[:2])
    first, _ = fg.split(y, 2)
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view and is being modified inplace. This view "
                                           "is the output of a function that returns multiple views"):
        MulTwo_.apply(first)


class DirtyNotInput(Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 1
        ctx.mark_dirty(y)
        return y

    @staticmethod
    def backward(ctx, g):
        return g


class DirtyNotReturned(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x * 1

    @staticmethod
    def backward(ctx, g):
        return g


def test_mark_dirty_errors_then_a_correct_call_works():
    a = leaf(3)
    with pytest.raises(RuntimeError, match="DirtyNotInput: only input Tensors"):
        DirtyNotInput.apply(a.clone())
    with pytest.raises(RuntimeError, match=r"not returned as output.*DirtyNotReturned"):
        DirtyNotReturned.apply(a.clone())
    MulTwo_.apply(a.clone()).sum().backward()
    np.testing.assert_array_equal(a.grad.data, np.full(3, 2.0))


# ----- saved tensors ------------------------------------------------------------------------------
class SavesANumber(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x, 3)
        return x * 1

    @staticmethod
    def backward(ctx, g):
        return g


def test_save_for_backward_rejects_non_tensors():
    with pytest.raises(TypeError, match="SavesANumber: save_for_backward .* argument 1 is of type int"):
        SavesANumber.apply(leaf(2))


def test_saved_tensors_are_version_checked_and_freed():
    x = leaf(3)
    y = Exp.apply(x)
    node = y.grad_fn
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, 2 * np.exp(x.data))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _ = node.saved_tensors
    z = Exp.apply(x)
    with fg.no_grad():
        z.add_(1)
    with pytest.raises(RuntimeError, match=r"\[ExpBackward, tensor of shape \[3\]\] is at version 1; expected "
                                           r"version 0"):
        z.sum().backward()


def test_saved_output_does_not_keep_the_graph_alive():
    import gc
    import weakref

    y = Exp.apply(leaf(3))
    ref = weakref.ref(y.grad_fn)
    del y
    gc.disable()
    try:
        assert ref() is None  # freed by reference counting alone: no cycle through the saved output
    finally:
        gc.enable()


# ----- once_differentiable ------------------------------------------------------------------------
class CubeOnce(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        assert not fg.is_grad_enabled()
        return 3 * x * x * g


def test_once_differentiable_first_order_works():
    x = leaf(4)
    assert gradcheck(CubeOnce.apply, (x,))


def test_once_differentiable_raises_on_double_backward():
    x = leaf(4)
    (gx,) = fg.autograd.grad(CubeOnce.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(gx.data, 3 * x.data ** 2)
    assert gx.requires_grad
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        gx.sum().backward()
    with pytest.raises(RuntimeError, match="@once_differentiable"):
        fg.autograd.grad(gx.sum(), x)
    (gx,) = fg.autograd.grad(CubeOnce.apply(x).sum(), x)  # a later first-order pass still works
    np.testing.assert_allclose(gx.data, 3 * x.data ** 2)


# ----- what backward returns ----------------------------------------------------------------------
def _returning(result):
    """A Function f(x, k) = x * k whose backward returns ``result(g)``."""

    class Returns(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return result(g)

    return Returns


@pytest.mark.parametrize("result, error, message", [
    (lambda g: (g,), RuntimeError,
     r"function ReturnsBackward returned an incorrect number of gradients \(expected 2, got 1\)"),
    (lambda g: (g, None, g), RuntimeError, r"incorrect number of gradients \(expected 2, got 3\)"),
    (lambda g: (g, g), RuntimeError,
     "function ReturnsBackward returned a gradient different than None at position 2, but the corresponding "
     "forward input was not a Tensor"),
    (lambda g: (fg.ones(4), None), RuntimeError,
     r"Function ReturnsBackward returned an invalid gradient at index 0 - got \[4\] but expected shape "
     r"compatible with \[2, 3\]"),
    (lambda g: (fg.ones(3, 2), None), RuntimeError, r"invalid gradient at index 0 - got \[3, 2\]"),
    (lambda g: (fg.ones(1, 3), None), RuntimeError, r"invalid gradient at index 0 - got \[1, 3\]"),
    (lambda g: (g * (1 + 0.5j), None), RuntimeError,
     r"returned a complex gradient \(dtype complex128\) at index 0 for a real input \(dtype float64\)"),
    (lambda g: (1.0, None), RuntimeError, "returned a gradient of type float at index 0"),
    (lambda g: ([1.0, 2.0, 3.0], None), RuntimeError, "returned a gradient of type list at index 0"),
])
def test_invalid_gradients_raise_and_a_later_backward_works(result, error, message):
    x = leaf(2, 3)
    with pytest.raises(error, match=message):
        _returning(result).apply(x, 2.0).sum().backward()
    assert fg.is_grad_enabled()
    assert x.grad is None
    _returning(lambda g: (g * 2, None)).apply(x, 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad.data, np.full((2, 3), 2.0))


@pytest.mark.parametrize("create_graph", [False, True])
def test_broadcastable_gradients_are_reduced_and_arrays_accepted(create_graph):
    x = leaf(2, 3)
    returns = _returning(lambda g: (fg.ones(4, 2, 3), None, None))  # extra Nones are allowed
    (gx,) = fg.autograd.grad(returns.apply(x, 1.0).sum(), x, create_graph=create_graph)
    np.testing.assert_array_equal(gx.data, np.full((2, 3), 4.0))
    returns = _returning(lambda g: (np.full((2, 3), 2.0), None))
    (gx,) = fg.autograd.grad(returns.apply(x, 1.0).sum(), x, create_graph=create_graph)
    np.testing.assert_array_equal(gx.data, np.full((2, 3), 2.0))


@pytest.mark.parametrize("create_graph", [False, True])
def test_gradient_of_another_dtype_is_cast(create_graph):
    x = leaf(2, 3)
    returns = _returning(lambda g: (np.ones((2, 3), np.float32), None))
    (gx,) = fg.autograd.grad(returns.apply(x, 1.0).sum(), x, create_graph=create_graph)
    assert gx.dtype == np.float64


def test_gradient_for_an_input_that_needs_none_is_ignored():
    x, w = leaf(3), fg.tensor([1.0, 2.0, 3.0])
    y = PassThrough.apply(x, w)[0]
    y.sum().backward()
    assert w.grad is None
    np.testing.assert_array_equal(x.grad.data, np.full(3, 3.0))


def test_node_hooks_see_the_function_node():
    x = leaf(3)
    y = GradCoeff.apply(x, 2.0)
    seen = []
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(len(grad_inputs)))
    y.sum().backward()
    assert seen == [2]


# ----- random elementwise Functions against the built-in ops --------------------------------------
ELEMENTWISE = {  # name: (the built-in op, its derivative written with funcgrad ops)
    "exp": (fg.exp, fg.exp),
    "sin": (fg.sin, fg.cos),
    "tanh": (fg.tanh, lambda x: 1 - fg.tanh(x) ** 2),
    "sigmoid": (fg.sigmoid, lambda x: fg.sigmoid(x) * (1 - fg.sigmoid(x))),
    "square": (fg.square, lambda x: 2 * x),
    "softplus": (lambda x: fg.log1p(fg.exp(x)), fg.sigmoid),
}


def _elementwise_function(name: str) -> type[Function]:
    op, derivative = ELEMENTWISE[name]

    class Elementwise(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return op(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * derivative(x)

    return Elementwise


FUNCTIONS = {name: _elementwise_function(name) for name in ELEMENTWISE}


@settings(max_examples=examples(40), deadline=None)
@given(names=st.lists(st.sampled_from(sorted(ELEMENTWISE)), min_size=1, max_size=4),
       x=arrays(np.float64, array_shapes(max_dims=2, max_side=4),
                elements=st.floats(-2, 2, allow_nan=False)))
def test_random_elementwise_functions_agree_with_built_in_ops(names, x):
    a, b = fg.tensor(x, requires_grad=True), fg.tensor(x, requires_grad=True)
    y_custom, y_builtin = a, b
    for name in names:
        # exp of it, squared, stays finite: log1p(exp(y))'s second derivative divides by (1 + e^y)^2 (as torch's
        # does; at y = 679 that square overflows and both give the same wrong value, a cancellation lost)
        assume(np.all(np.abs(y_builtin.data) < 350))
        y_custom = FUNCTIONS[name].apply(y_custom)
        y_builtin = ELEMENTWISE[name][0](y_builtin)
    np.testing.assert_allclose(y_custom.data, y_builtin.data, rtol=1e-12, atol=1e-12)
    (ga,) = fg.autograd.grad(y_custom.sum(), a, create_graph=True)
    (gb,) = fg.autograd.grad(y_builtin.sum(), b, create_graph=True)
    np.testing.assert_allclose(ga.data, gb.data, rtol=1e-10, atol=1e-12)
    (gga,) = fg.autograd.grad(ga.sum(), a)
    (ggb,) = fg.autograd.grad(gb.sum(), b)
    assert np.isfinite(ggb.data).all()  # the domain keeps everything finite: no vacuous NaN == NaN
    np.testing.assert_allclose(gga.data, ggb.data, rtol=1e-9, atol=1e-10)


class MatVec(Function):
    """``A @ x`` with a backward written for one gradient: ``outer(g, x)`` and ``A^T g``."""

    @staticmethod
    def forward(ctx, A, x):
        ctx.save_for_backward(A, x)
        return A @ x

    @staticmethod
    def backward(ctx, g):
        A, x = ctx.saved_tensors
        return fg.outer(g, x), A.T @ g


class ScaleBy(Product):
    """``x * k`` for a 0-d ``k``: its backward sums ``g * x`` over everything."""

    @staticmethod
    def backward(ctx, g):
        x, k = ctx.saved_tensors
        return g * k, fg.sum(g * x)


@pytest.mark.parametrize("create_graph", [False, True])
def test_batched_backward_calls_backward_once_per_gradient(create_graph: bool) -> None:
    """A batched pass (a vectorized Jacobian, jacrev) gives a Function's backward one gradient at a time, as it is
    written: outer(g, x) of a batch of g flattened it, and sum(g * x) summed over the batch."""
    A, x = np.arange(6.0).reshape(2, 3) - 2, np.array([1.0, -1.0, 2.0])
    dA, dx = fg.functional.jacobian(MatVec.apply, (fg.tensor(A), fg.tensor(x)), vectorize=True,
                                    create_graph=create_graph)
    np.testing.assert_allclose(dA.data, np.einsum("ij,k->ijk", np.eye(2), x))  # d(Ax)_i / dA_jk = [i=j] x_k
    np.testing.assert_allclose(dx.data, A)
    dx, dk = fg.func.jacrev(ScaleBy.apply, (0, 1))(x, np.array(2.0))
    np.testing.assert_allclose(dx, 2 * np.eye(3))
    np.testing.assert_allclose(dk, x)
    H = fg.func.jacrev(fg.func.jacrev(lambda x: fg.sum(MatVec.apply(fg.tensor(A), x)) ** 2))(x)
    np.testing.assert_allclose(H, 2 * np.outer(A.sum(0), A.sum(0)))
