"""funcgrad.nn.functional against torch.nn.functional (values and gradients, float64), hand references,
gradcheck/gradgradcheck, and torch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import nn
from funcgrad.check import gradcheck, gradgradcheck
from funcgrad.nn import functional as F
from tests.nn.torch_compare import compare, needs_torch, torch

TF = torch.nn.functional if torch is not None else None
rng = np.random.default_rng(42)


def A(*shape: int) -> np.ndarray:
    return rng.normal(size=shape)


# ----- convolution and pooling ---------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"stride": 2}, {"padding": 1}, {"padding": "same"}, {"padding": "valid"},
                                    {"dilation": 2, "padding": (1, 2)}, {"stride": (2, 1), "padding": (0, 1)}])
def test_conv2d_matches_torch(kwargs: dict) -> None:
    compare(lambda x, w, b: F.conv2d(x, w, b, **kwargs), lambda x, w, b: TF.conv2d(x, w, b, **kwargs),
            A(2, 3, 7, 8), A(4, 3, 3, 2), A(4))


@needs_torch
def test_conv2d_groups_and_unbatched() -> None:
    compare(lambda x, w: F.conv2d(x, w, groups=2), lambda x, w: TF.conv2d(x, w, groups=2), A(2, 4, 5, 5),
            A(6, 2, 3, 3))
    compare(lambda x, w: F.conv2d(x, w, padding="same", dilation=2), lambda x, w: TF.conv2d(x, w, padding="same",
            dilation=2), A(3, 6, 6), A(2, 3, 4, 4))


@needs_torch
def test_conv1d_matches_torch() -> None:
    compare(lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2),
            lambda x, w, b: TF.conv1d(x, w, b, stride=2, padding=1, dilation=2), A(2, 3, 11), A(5, 3, 3), A(5))


@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"stride": 2, "output_padding": 1}, {"stride": (2, 3), "padding": 1},
                                    {"groups": 2, "dilation": 2}])
def test_conv_transpose2d_matches_torch(kwargs: dict) -> None:
    compare(lambda x, w, b: F.conv_transpose2d(x, w, b, **kwargs), lambda x, w, b: TF.conv_transpose2d(x, w, b,
            **kwargs), A(2, 4, 4, 5), A(4, 3, 3, 3), A(3 * (2 if kwargs.get("groups") else 1)))


@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"stride": 1}, {"padding": 1}, {"ceil_mode": True}, {"dilation": 2},
                                    {"stride": (2, 1), "padding": (1, 0), "ceil_mode": True}])
def test_max_pool2d_matches_torch(kwargs: dict) -> None:
    x = rng.permutation(np.linspace(-3, 3, 2 * 3 * 7 * 7)).reshape(2, 3, 7, 7)  # no ties
    compare(lambda x: F.max_pool2d(x, 3, **kwargs), lambda x: TF.max_pool2d(x, 3, **kwargs), x)
    values, indices = F.max_pool2d(fg.tensor(x), 3, return_indices=True, **kwargs)
    expected = TF.max_pool2d(torch.tensor(x), 3, return_indices=True, **kwargs)[1]
    np.testing.assert_array_equal(indices.data, expected.numpy())


@needs_torch
@pytest.mark.parametrize("kwargs", [{"kernel_size": 2}, {"kernel_size": 2, "stride": 1, "padding": 1},
                                    {"kernel_size": (2, 3), "padding": 1, "dilation": (1, 2)},
                                    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}])
def test_max_pool2d_ties_nans_and_infinities_as_torch(kwargs: dict) -> None:
    """Indices and gradients where windows tie, hold several NaNs, or hold only -inf beside the padding:
    the first maximum, the last NaN, the first element inside the input (never a padded place)."""
    x = rng.choice([-np.inf, 0.0, 1.0, np.nan], size=(2, 3, 6, 7), p=[0.4, 0.25, 0.25, 0.1])
    x[0, 0] = -np.inf
    values, indices = F.max_pool2d(fg.tensor(x, requires_grad=True), return_indices=True, **kwargs)
    t_values, t_indices = TF.max_pool2d(torch.tensor(x, requires_grad=True), return_indices=True, **kwargs)
    np.testing.assert_array_equal(values.data, t_values.detach().numpy())
    np.testing.assert_array_equal(indices.data, t_indices.numpy())
    x_fg, x_th = fg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    w = rng.normal(size=values.shape)
    F.max_pool2d(x_fg, **kwargs).backward(fg.tensor(w))
    TF.max_pool2d(x_th, **kwargs).backward(torch.tensor(w))
    np.testing.assert_array_equal(x_fg.grad.data, x_th.grad.numpy())


@needs_torch
def test_max_pool1d_matches_torch() -> None:
    compare(lambda x: F.max_pool1d(x, 2), lambda x: TF.max_pool1d(x, 2), A(2, 3, 8))


def test_max_pool1d_ties() -> None:
    x = fg.tensor([[[1.0, 1.0, 0.0, 2.0]]], requires_grad=True)
    F.max_pool1d(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [[[1.0, 0.0, 0.0, 1.0]]])  # the first maximum takes g, as torch


def test_max_pool_window_without_elements_is_constant() -> None:
    """Positions -1 and 1 of a width-1 input (padding 1, dilation 2): the window holds only padding, so its value is
    -inf and no element gets its gradient. The index named position 1, the next row's element, which took g (torch
    does so too), or crashed the backward pass at the last row."""
    x = fg.tensor(np.arange(6.0).reshape(1, 1, 3, 2)[..., :1], requires_grad=True)  # (1, 1, 3, 1)
    values, indices = F.max_pool2d(x, (1, 2), 1, (0, 1), (1, 2), return_indices=True)
    np.testing.assert_array_equal(values.data, np.full((1, 1, 3, 1), -np.inf))
    np.testing.assert_array_equal(indices.data, np.full((1, 1, 3, 1), -1))
    (values.clamp(min=0.0) + F.max_pool2d(x, (1, 2), 1, (0, 1), (1, 2))).clamp(min=-1.0).sum().backward()
    np.testing.assert_array_equal(x.grad.data, np.zeros((1, 1, 3, 1)))
    y = fg.tensor(np.arange(4.0).reshape(4, 1), requires_grad=True)
    assert gradcheck(lambda a: F.max_pool1d(a, 2, 1, 1, 2).clamp(min=-1.0), (y,), check_forward_ad=True)
    assert gradgradcheck(lambda a: F.max_pool1d(a, 2, 1, 1, 2).clamp(min=-1.0), (y,))


@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"stride": 1}, {"padding": 1}, {"padding": 1, "count_include_pad": False},
                                    {"ceil_mode": True}, {"ceil_mode": True, "padding": 1, "count_include_pad": False},
                                    {"divisor_override": 3}])
def test_avg_pool2d_matches_torch(kwargs: dict) -> None:
    kwargs = {"stride": 2, **kwargs}
    compare(lambda x: F.avg_pool2d(x, 3, **kwargs), lambda x: TF.avg_pool2d(x, 3, **kwargs), A(2, 3, 8, 7))


@needs_torch
def test_avg_pool1d_adaptive_and_unfold_match_torch() -> None:
    compare(lambda x: F.avg_pool1d(x, 3, 2, 1), lambda x: TF.avg_pool1d(x, 3, 2, 1), A(2, 3, 9))
    compare(lambda x: F.adaptive_avg_pool2d(x, (3, 4)), lambda x: TF.adaptive_avg_pool2d(x, (3, 4)), A(2, 3, 7, 9))
    compare(lambda x: F.adaptive_avg_pool2d(x, (None, 2)), lambda x: TF.adaptive_avg_pool2d(x, (None, 2)),
            A(1, 2, 5, 5))
    compare(lambda x: F.adaptive_avg_pool1d(x, 3), lambda x: TF.adaptive_avg_pool1d(x, 3), A(2, 2, 7))
    compare(lambda x: F.unfold(x, (2, 3), padding=1, stride=2), lambda x: TF.unfold(x, (2, 3), padding=1, stride=2),
            A(2, 3, 5, 6))


def test_unfold_of_an_unbatched_input() -> None:
    """torch takes (C, H, W) too, giving (C kH kW, L); it was an error."""
    x = np.arange(6.0).reshape(1, 2, 3)  # blocks at columns 0 and 1: [[0, 1], [3, 4]] and [[1, 2], [4, 5]]
    np.testing.assert_array_equal(F.unfold(fg.tensor(x), 2).data, [[0.0, 1.0], [1.0, 2.0], [3.0, 4.0], [4.0, 5.0]])
    y = A(2, 3, 4)
    np.testing.assert_array_equal(F.unfold(fg.tensor(y), 2, padding=1).data,
                                  F.unfold(fg.tensor(y[None]), 2, padding=1).data[0])


def test_conv_by_hand() -> None:
    """A 1-channel 2x2 kernel on a 3x3 ramp: each output is the sum of its window weighted by the kernel."""
    x = np.arange(9.0).reshape(1, 1, 3, 3)
    w = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    expected = [[x[0, 0, i:i + 2, j:j + 2].ravel() @ w.ravel() for j in range(2)] for i in range(2)]
    np.testing.assert_allclose(F.conv2d(x, w)[0, 0], expected)
    np.testing.assert_allclose(F.avg_pool2d(x, 2, 1)[0, 0], [[2.0, 3.0], [5.0, 6.0]])
    np.testing.assert_allclose(F.max_pool2d(x, 2, 1)[0, 0], [[4.0, 5.0], [7.0, 8.0]])


def test_conv_and_pool_second_derivatives() -> None:
    x, w = fg.tensor(A(1, 2, 5, 5), requires_grad=True), fg.tensor(A(3, 2, 3, 3), requires_grad=True)
    def f(x, w):
        return F.avg_pool2d(F.conv2d(x, w, padding=1, stride=2).tanh(), 2, 1, ceil_mode=True)
    assert gradcheck(f, (x, w)) and gradgradcheck(f, (x, w))


@pytest.mark.parametrize("call,message", [
    (lambda: F.conv2d(fg.ones(2, 3, 5, 5), fg.ones(4, 2, 3, 3)), "expected input[2, 3, 5, 5] to have 2 channels"),
    (lambda: F.conv2d(fg.ones(2, 3, 2, 2), fg.ones(4, 3, 3, 3)), "Kernel size can't be greater"),
    (lambda: F.conv2d(fg.ones(2, 3, 5, 5), fg.ones(4, 3, 3, 3), padding="same", stride=2), "strided"),
    (lambda: F.conv2d(fg.ones(2, 5, 5), fg.ones(4, 3, 3, 3)), "to have 3 channels"),
    (lambda: F.conv2d(fg.ones(5, 5), fg.ones(4, 3, 3, 3)), "Expected 3D (unbatched) or 4D (batched) input"),
    (lambda: F.max_pool2d(fg.ones(1, 1, 4, 4), 2, padding=2), "pad should be at most half"),
    (lambda: F.max_pool2d(fg.ones(1, 1, 2, 2), 3), "Output size is too small"),
    (lambda: F.conv_transpose2d(fg.ones(1, 2, 3, 3), fg.ones(2, 1, 3, 3), stride=2, output_padding=2),
     "output padding must be smaller"),
    # a dilated window may lie wholly in padding of up to half its span: torch bounds padding by the kernel too
    (lambda: F.max_pool1d(fg.ones(1, 6), 3, 1, 2, 2), "pad should be at most half of kernel size"),
    # arguments that gave a value (dilation 0: every window one element) or NumPy's errors
    (lambda: F.max_pool2d(fg.ones(1, 1, 4, 4), 2, 1, 0, 0), "dilation should be greater than zero"),
    (lambda: F.max_pool2d(fg.ones(1, 1, 4, 4), 2, 0), "stride should be greater than zero"),
    (lambda: F.avg_pool1d(fg.ones(1, 4), 0), "kernel size should be greater than zero"),
    (lambda: F.conv_transpose2d(fg.ones(1, 2, 3, 3), fg.ones(2, 1, 3, 3), dilation=0), "dilation should be greater"),
    (lambda: F.conv2d(fg.ones(1, 2, 5, 5), fg.ones(3, 2, 2, 2), stride=0), "non-positive stride is not supported"),
    (lambda: F.conv2d(fg.ones(1, 2, 5, 5), fg.ones(3, 2, 2, 2), padding=-1), "negative padding is not supported"),
    (lambda: F.conv1d(fg.ones(1, 2, 5), fg.ones(3, 2, 2), groups=0), "non-positive groups is not supported"),
    (lambda: F.conv_transpose1d(fg.ones(1, 2, 5), fg.ones(2, 3, 2), output_padding=-1), "negative output_padding"),
    (lambda: F.adaptive_avg_pool2d(fg.ones(1, 1, 4, 4), (2, -1)), "must be greater than or equal to 0"),
    (lambda: F.layer_norm(fg.ones(2, 4), (4,), fg.ones(4, 1)), "Expected weight to be of same shape as normalized"),
    (lambda: F.layer_norm(fg.ones(2, 4), 4, None, fg.ones(1, 4)), "Expected bias to be of same shape as normalized"),
    (lambda: F.embedding(fg.tensor([0, 1]), fg.ones(3)), "'weight' must be 2-D"),
    (lambda: F.nll_loss(fg.zeros(2, 3), fg.tensor([0, 1]), fg.ones(4)), "defined either for all 3 classes"),
    (lambda: F.cross_entropy(fg.zeros(2, 3), fg.tensor([0, 1]), fg.ones(4), label_smoothing=0.1), "for all 3 classes"),
    (lambda: F.cross_entropy(fg.zeros(2, 3), fg.ones(2, 3) / 3, fg.ones(1, 3)), "for all 3 classes"),
    (lambda: F.cross_entropy(fg.zeros(2, 3), fg.ones(2, 3) / 3, ignore_index=0), "ignore_index is not supported"),
])
def test_errors(call, message: str) -> None:
    with pytest.raises(RuntimeError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        call()



@pytest.mark.parametrize("layer,out_shape", [
    (lambda x, w: F.conv2d(x, w, padding=1), (0, 4, 4, 4)),
    (lambda x, w: F.conv2d(x, w[:, :1], groups=2), (0, 4, 2, 2)),
    (lambda x, w: F.conv_transpose2d(x, w[:2, :, :2, :2], stride=2), (0, 2, 8, 8)),
    (lambda x, w: F.conv_transpose2d(x, w[:2, :, :2, :2], groups=2), (0, 4, 5, 5)),
    (lambda x, w: F.max_pool2d(x, 2) * w.sum(), (0, 2, 2, 2)),
    (lambda x, w: F.unfold(x, 2) * w.sum(), (0, 8, 9)),
    (lambda x, w: F.group_norm(x, 2, w[:2, 0, 0, 0], w[2:, 0, 0, 0]), (0, 2, 4, 4)),
    (lambda x, w: F.batch_norm(x, fg.zeros(2), fg.ones(2), w[:2, 0, 0, 0], w[2:, 0, 0, 0], training=True),
     (0, 2, 4, 4)),
])
def test_an_empty_batch_runs_forward_and_backward(layer, out_shape: tuple) -> None:
    """As torch: an empty output and zero gradients (a reshape to (0, n, -1) had no answer in NumPy)."""
    x, w = fg.zeros(0, 2, 4, 4, requires_grad=True), fg.tensor(A(4, 2, 3, 3), requires_grad=True)
    out = layer(x, w)
    assert out.shape == out_shape
    out.sum().backward()
    assert x.grad.shape == x.shape and not w.grad.data.any()


_TOO_SMALL = [  # (input shape, weight shape, keywords): output sizes 0 or negative
    ((2, 1, 2), (1, 1, 3), {"padding": 2}), ((1, 2), (1, 1, 3), {"padding": 3}),
    ((1, 1, 1), (1, 1, 1), {"padding": 1, "stride": 2, "output_padding": 1}),
    ((2, 1, 2, 3), (1, 1, 3, 2), {"padding": (2, 0)}), ((2, 1, 2, 3), (1, 1, 3, 2), {"padding": (0, 2)}),
    ((1, 2, 3), (1, 1, 3, 2), {"padding": (3, 2)}), ((1, 1, 2, 2), (1, 1, 1, 1), {"stride": 3, "padding": (2, 1),
                                                                                  "output_padding": (0, 2)}),
]


@needs_torch
@pytest.mark.parametrize("x_shape,w_shape,kwargs", _TOO_SMALL)
def test_conv_transpose_to_an_output_of_size_zero_or_less_raises_as_torch(x_shape: tuple, w_shape: tuple,
                                                                          kwargs: dict) -> None:
    """A size of 0 returned an empty Tensor (oneDNN's float32 path for a batch of several does; torch's own kernels,
    float64 and a single sample, raise for it as for a negative size)."""
    name = f"conv_transpose{len(w_shape) - 2}d"
    with pytest.raises(RuntimeError) as expected:
        getattr(TF, name)(torch.ones(x_shape, dtype=torch.float64), torch.ones(w_shape, dtype=torch.float64), **kwargs)
    assert "Output size is too small" in str(expected.value)
    with pytest.raises(RuntimeError) as got:
        getattr(F, name)(fg.ones(*x_shape, requires_grad=True), fg.ones(*w_shape, requires_grad=True), **kwargs)
    assert str(got.value) == str(expected.value)


def test_batch_norm_of_an_empty_batch_keeps_its_statistics() -> None:
    bn = nn.BatchNorm1d(3, momentum=None)
    assert bn(fg.zeros(0, 3)).shape == (0, 3)
    np.testing.assert_array_equal(bn.running_mean.data, np.zeros(3))
    np.testing.assert_array_equal(bn.running_var.data, np.ones(3))

# ----- activations and layers -------------------------------------------------------------------------
ACTIVATIONS = [("relu", ()), ("leaky_relu", (0.2,)), ("elu", (0.7,)), ("gelu", ()), ("silu", ()), ("sigmoid", ()),
               ("tanh", ()), ("softplus", (2.0, 3.0)), ("softmax", (1,)), ("log_softmax", (0,))]


@needs_torch
@pytest.mark.parametrize("name,args", ACTIVATIONS)
def test_activations_match_torch(name: str, args: tuple) -> None:
    compare(lambda t: getattr(F, name)(t, *args), lambda t: getattr(TF, name)(t, *args), A(4, 5) * 3)


@needs_torch
@pytest.mark.parametrize("name,args", [a for a in ACTIVATIONS if "softmax" not in a[0]] + [("elu", (2.0,))])
def test_activations_at_their_kinks_match_torch(name: str, args: tuple) -> None:
    """At 0 (and at softplus's threshold) the one-sided slope torch picks: elu's gradient at 0 was alpha / 2."""
    kinks = np.array([0.0, -0.0, 1.5, -1.5, 20.0])  # 1.5: softplus(beta=2, threshold=3) switches to x there
    compare(lambda t: getattr(F, name)(t, *args), lambda t: getattr(TF, name)(t, *args), kinks)


@needs_torch
@pytest.mark.parametrize("name,args", [("relu", ()), ("leaky_relu", (0.2,)), ("elu", (0.7,)), ("silu", ()),
                                       ("dropout", (0.0,))])
def test_inplace_activations_write_their_input_as_torch(name: str, args: tuple) -> None:
    """torch's inplace=True writes the input: code that ignores the result (F.relu(y, inplace=True); return y)
    got y unchanged; the write carries the history (gradients as torch's) and a leaf that requires grad raises."""
    data = A(3, 4)
    x, x_ref = fg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    y, y_ref = x * 2, x_ref * 2
    assert getattr(F, name)(y, *args, inplace=True) is y
    getattr(TF, name)(y_ref, *args, inplace=True)
    np.testing.assert_allclose(y.data, y_ref.detach().numpy(), rtol=1e-13)
    w = A(3, 4)
    (y * fg.tensor(w)).sum().backward()
    (y_ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.data, x_ref.grad.numpy(), rtol=1e-13)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        getattr(F, name)(x, *args, inplace=True) if name != "dropout" else F.dropout(x, 0.5, inplace=True)
    module = {"relu": nn.ReLU, "leaky_relu": nn.LeakyReLU, "elu": nn.ELU, "silu": nn.SiLU, "dropout": nn.Dropout}[name]
    z = fg.tensor(data)
    assert module(*args, inplace=True)(z) is z


def test_softmax_without_dim_warns_as_torch() -> None:
    """torch's legacy implicit dim normalizes a 3-d input over dim 0 (the batch): torch warns, and so do we."""
    x = fg.tensor(A(2, 3, 4))
    for name in ("softmax", "log_softmax"):
        with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} has been deprecated"):
            out = getattr(F, name)(x)
        np.testing.assert_allclose(out.data, getattr(F, name)(x, 0).data)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        nn.Softmax()(x)


@needs_torch
def test_gelu_tanh_matches_torch() -> None:
    compare(lambda t: F.gelu(t, approximate="tanh"), lambda t: TF.gelu(t, approximate="tanh"), A(3, 4))


@pytest.mark.parametrize("name,args", ACTIVATIONS)
def test_activations_second_derivatives(name: str, args: tuple) -> None:
    t = fg.tensor(A(4, 5) * 3, requires_grad=True)
    assert gradgradcheck(lambda t: getattr(F, name)(t, *args), (t,))


def test_large_inputs_stay_finite() -> None:
    x = fg.tensor([-800.0, 0.0, 800.0], requires_grad=True)
    (F.softplus(x) + F.elu(x)).sum().backward()
    assert np.all(np.isfinite(x.grad.data))


@needs_torch
def test_linear_bilinear_match_torch() -> None:
    compare(F.linear, TF.linear, A(3, 4), A(5, 4), A(5))
    compare(F.bilinear, TF.bilinear, A(3, 2), A(3, 4), A(5, 2, 4), A(5))
    compare(F.linear, TF.linear, A(2, 3, 4), A(5, 4), A(3, 5))  # a bias of more than one dim
    compare(F.linear, TF.linear, A(4, 4), A(5, 4), A(1, 5))
    x = fg.tensor(A(3, 4), requires_grad=True)
    F.linear(x, fg.tensor(A(5, 4)), fg.tensor(A(5).astype(np.float32))).sum().backward()  # a bias of another dtype
    for args, message in (((A(3, 4), A(5, 3)), r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 3x5\)"),
                          ((np.array(1.0), A(5, 4)), "both arguments to linear need to be at least 1D"),
                          ((A(3, 4), A(4)), "expected a 2-D weight"),
                          ((A(3, 4), A(5, 4), A(2, 3, 5)), r"output with shape \[3, 5\] doesn't match the broadcast")):
        with pytest.raises(RuntimeError, match=message):
            F.linear(*(fg.tensor(a) for a in args))


@needs_torch
def test_norms_match_torch() -> None:
    compare(lambda x, w, b: F.layer_norm(x, (3, 4), w, b), lambda x, w, b: TF.layer_norm(x, (3, 4), w, b),
            A(2, 3, 4), A(3, 4), A(3, 4))
    compare(lambda x, w, b: F.group_norm(x, 2, w, b), lambda x, w, b: TF.group_norm(x, 2, w, b),
            A(2, 4, 3, 3), A(4), A(4))
    compare(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
            lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True), A(5, 3, 2, 2), A(3), A(3))


@needs_torch
def test_batch_norm_running_statistics() -> None:
    x = A(6, 3)
    rm, rv = fg.zeros(3), fg.ones(3)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    F.batch_norm(fg.tensor(x), rm, rv, training=True, momentum=0.3)
    TF.batch_norm(torch.tensor(x), trm, trv, training=True, momentum=0.3)
    np.testing.assert_allclose(rm.data, trm.numpy())
    np.testing.assert_allclose(rv.data, trv.numpy())


def test_batch_norm_needs_more_than_one_value_per_channel() -> None:
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.batch_norm(fg.ones(1, 3), fg.zeros(3), fg.ones(3), training=True)
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, got input size "
                                         r"\[1, 4, 1\]"):
        F.group_norm(fg.ones(1, 4, 1), 4)  # as torch: one group of one value
    assert F.group_norm(fg.ones(2, 4), 4).shape == (2, 4)


def test_embedding_indices_outside_the_table_raise() -> None:
    """NumPy takes -1 as the last row: torch's IndexError instead."""
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(fg.tensor([0, -1]), fg.ones(3, 2))
    with pytest.raises(IndexError, match="index out of range in self"):
        nn.Embedding(3, 2)(fg.tensor([3]))


def test_dropout_is_seeded_and_scaled() -> None:
    x = fg.ones(1000)
    a = F.dropout(x, 0.3, generator=fg.Generator(1))
    b = F.dropout(x, 0.3, generator=fg.Generator(1))
    np.testing.assert_array_equal(a.data, b.data)
    assert set(np.unique(a.data)) == {0.0, 1 / 0.7}
    assert abs((a.data == 0).mean() - 0.3) < 0.05
    assert F.dropout(x, 0.3, training=False) is x
    channels = F.dropout2d(fg.ones(4, 50, 3, 3), 0.5, generator=fg.Generator(0)).data
    assert np.all(channels.min(axis=(2, 3)) == channels.max(axis=(2, 3)))  # whole channels kept or dropped
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)


def test_dropout_of_integers_raises_as_torch() -> None:
    """The kept elements of an integer input were scaled by int(1 / (1 - p)), 1 for p = 0.3, not 1 / 0.7."""
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type int64"):
        F.dropout(fg.tensor([1, 2, 3]), 0.3)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type int64"):
        nn.Dropout2d(0.5)(fg.tensor(np.ones((2, 2, 2, 2), np.int64)))
    np.testing.assert_array_equal(F.dropout(fg.tensor([1, 2, 3]), 0.3, training=False).data, [1, 2, 3])
    np.testing.assert_array_equal(F.dropout(fg.tensor([1, 2, 3]), 0.0).data, [1, 2, 3])  # nothing to scale


def test_dropout2d_of_other_ranks_drops_the_channels_of_dim_1_as_torch() -> None:
    """torch warns and drops each (sample, channel) of dim 1 alone: an (N, C) input elementwise. The mask was of
    the dims before the last two, so a 2-D input was dropped or kept whole."""
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        flat = F.dropout2d(fg.ones(4, 500), 0.5, generator=fg.Generator(0)).data
    assert all(set(np.unique(row)) == {0.0, 2.0} for row in flat)
    with pytest.warns(UserWarning, match="Received a 5-D input to dropout2d"):
        deep = F.dropout2d(fg.ones(4, 50, 2, 3, 3), 0.5, generator=fg.Generator(0)).data
    assert np.all(deep.min(axis=(2, 3, 4)) == deep.max(axis=(2, 3, 4)))
    assert set(np.unique(deep)) == {0.0, 2.0}
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        F.dropout2d(fg.ones(4), 0.5)


@needs_torch
def test_embedding_and_one_hot_match_torch() -> None:
    idx = np.array([[0, 2], [1, 2]])
    compare(lambda w: F.embedding(fg.tensor(idx), w, padding_idx=2), lambda w: TF.embedding(torch.tensor(idx), w,
            padding_idx=2), A(4, 3))
    np.testing.assert_array_equal(F.one_hot(fg.tensor([0, 2]), 4).data, TF.one_hot(torch.tensor([0, 2]), 4).numpy())


def test_one_hot() -> None:
    np.testing.assert_array_equal(F.one_hot(fg.tensor([0, 2]), 4).data, [[1, 0, 0, 0], [0, 0, 1, 0]])
    assert F.one_hot(fg.tensor([0, 2])).shape == (2, 3)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(fg.tensor([0, 5]), 3)


# ----- losses --------------------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,kwargs", [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                                         ("huber_loss", {"delta": 0.7})])
def test_regression_losses_match_torch(name: str, kwargs: dict, reduction: str) -> None:
    compare(lambda x, y: getattr(F, name)(x, y, reduction=reduction, **kwargs),
            lambda x, y: getattr(TF, name)(x, y, reduction=reduction, **kwargs), A(4, 3), A(4, 3))


@pytest.mark.parametrize("name,kwargs,curvature", [("smooth_l1_loss", {"beta": 0.5}, 2.0),
                                                   ("huber_loss", {"delta": 0.7}, 1.0)])
def test_quadratic_losses_curve_where_input_equals_target(name: str, kwargs: dict, curvature: float) -> None:
    """0.5 d^2 / beta (huber: 0.5 d^2) near d = 0 has second derivative 1 / beta (1) at d = 0 too: the square of
    |d| had 0 there (sign(0) = 0), so a perfect fit had a Hessian of zeros."""
    x, y = np.array([1.0, 2.0, -0.5]), np.array([1.0, 2.1, -3.0])  # exact fit, inside, outside the quadratic part
    h = fg.func.hessian(lambda a: getattr(F, name)(a, fg.tensor(y), reduction="sum", **kwargs))(fg.tensor(x))
    np.testing.assert_allclose(h.data, np.diag([curvature, curvature, 0.0]))


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_nll_and_cross_entropy_match_torch(reduction: str, weighted: bool, smoothing: float) -> None:
    target = np.array([0, 3, -100, 1, 2])
    kwargs = {"weight": np.array([1.0, 2.0, 0.5, 1.5])} if weighted else {}
    tw = {k: torch.tensor(v) for k, v in kwargs.items()}
    compare(lambda x: F.nll_loss(F.log_softmax(x, 1), fg.tensor(target), reduction=reduction, **kwargs),
            lambda x: TF.nll_loss(TF.log_softmax(x, 1), torch.tensor(target), reduction=reduction, **tw), A(5, 4))
    compare(lambda x: F.cross_entropy(x, fg.tensor(target), reduction=reduction, label_smoothing=smoothing, **kwargs),
            lambda x: TF.cross_entropy(x, torch.tensor(target), reduction=reduction, label_smoothing=smoothing, **tw),
            A(5, 4))
    compare(lambda x, p: F.cross_entropy(x, p, reduction=reduction, label_smoothing=smoothing, **kwargs),
            lambda x, p: TF.cross_entropy(x, p, reduction=reduction, label_smoothing=smoothing, **tw),
            A(5, 4), rng.dirichlet(np.ones(4), 5))


@needs_torch
def test_cross_entropy_spatial_matches_torch() -> None:
    target = rng.integers(0, 3, size=(2, 4, 4))
    compare(lambda x: F.cross_entropy(x, fg.tensor(target)), lambda x: TF.cross_entropy(x, torch.tensor(target)),
            A(2, 3, 4, 4))


@needs_torch
@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 3, 2, 2)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_fused_cross_entropy_matches_torch_to_second_order(shape: tuple, reduction: str, weighted: bool) -> None:
    classes = shape[1] if len(shape) > 1 else shape[0]
    target = rng.integers(0, classes, shape[:1] + shape[2:] if len(shape) > 1 else ())
    if target.ndim:
        target.flat[0] = -100
    weight = rng.uniform(0.5, 2.0, classes) if weighted else None
    x = A(*shape)
    xf, xt = fg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = F.cross_entropy(xf, fg.tensor(target), weight, reduction=reduction)
    expected = TF.cross_entropy(xt, torch.tensor(target), None if weight is None else torch.tensor(weight),
                                reduction=reduction)
    assert out.grad_fn.name() == "CrossEntropyBackward0"  # one fused node, not log_softmax then nll_loss
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-12)
    w, v = rng.normal(size=out.shape), A(*shape)
    (gf,) = fg.autograd.grad((out * w).sum(), xf, create_graph=True)
    (gt,) = torch.autograd.grad((expected * torch.tensor(w)).sum(), xt, create_graph=True)
    np.testing.assert_allclose(gf.data, gt.detach().numpy(), rtol=1e-10, atol=1e-12)
    (hf,) = fg.autograd.grad((gf * v).sum(), xf)  # a Hessian-vector product
    (ht,) = torch.autograd.grad((gt * torch.tensor(v)).sum(), xt)
    np.testing.assert_allclose(hf.data, ht.numpy(), rtol=1e-10, atol=1e-12)


def test_fused_cross_entropy_gradient_by_hand() -> None:
    x = fg.tensor([[0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]], requires_grad=True)
    F.cross_entropy(x, fg.tensor([1, -100]), reduction="sum").backward()
    np.testing.assert_allclose(x.grad.data, [[0.25, -0.75, 0.25, 0.25], [0.0] * 4])  # softmax - onehot; ignored: 0


def test_fused_cross_entropy_checks() -> None:
    x = fg.tensor(A(3, 4), requires_grad=True)
    assert gradgradcheck(lambda x: F.cross_entropy(x, fg.tensor([0, 3, 1]), np.array([1.0, 2.0, 0.5, 1.5])), (x,))
    assert gradcheck(lambda x: F.cross_entropy(x, fg.tensor([0, 3, -100]), reduction="none"), (x,),
                     check_forward_ad=True)
    assert np.isnan(F.cross_entropy(x, fg.tensor([-100] * 3)).item())  # no counted target: 0 / 0, as torch
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)"):
        F.cross_entropy(x, fg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[3, 2\], got \[3, 3\]"):
        F.cross_entropy(fg.zeros(3, 4, 2), fg.tensor(np.zeros((3, 3), int)))
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        F.cross_entropy(x, fg.tensor([0, 4, 1]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.cross_entropy(x, fg.tensor([0, 1, 1]), reduction="avg")
    assert x.grad is None and x._version == 0  # nothing ran


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_class_probability_cross_entropy_differentiates_its_weight_as_torch(reduction: str, smoothing: float) -> None:
    """With class probabilities torch's loss is a composite, differentiable in the class weight too: the weight's
    gradient was silently None (the weight was copied to a constant)."""
    p = rng.dirichlet(np.ones(4), 5)
    compare(lambda x, w: F.cross_entropy(x, fg.tensor(p), w, reduction=reduction, label_smoothing=smoothing),
            lambda x, w: TF.cross_entropy(x, torch.tensor(p), w, reduction=reduction, label_smoothing=smoothing),
            A(5, 4), rng.uniform(0.5, 2.0, 4))
    inputs = (fg.tensor(A(5, 4), requires_grad=True), fg.tensor(rng.uniform(0.5, 2.0, 4), requires_grad=True))
    assert gradcheck(lambda x, w: F.cross_entropy(x, fg.tensor(p), w, label_smoothing=smoothing), inputs,
                     check_forward_ad=True)
    assert gradgradcheck(lambda x, w: F.cross_entropy(x, fg.tensor(p), w, label_smoothing=smoothing), inputs)


@pytest.mark.parametrize("loss", [
    lambda x, t, w: F.cross_entropy(x, t, w),
    lambda x, t, w: F.cross_entropy(x, t, w, label_smoothing=0.2),
    lambda x, t, w: F.nll_loss(F.log_softmax(x, 1), t, w),
])
def test_class_index_losses_refuse_a_weight_that_requires_grad_as_torch(loss) -> None:
    """torch's nll_loss has no derivative for its weight and says so; the weight got no gradient, silently."""
    x, w = fg.tensor(A(3, 4), requires_grad=True), fg.tensor(rng.uniform(0.5, 2.0, 4), requires_grad=True)
    with pytest.raises(RuntimeError, match="'nll_loss_forward' is not differentiable with respect to argument"):
        loss(x, fg.tensor([0, 3, 1]), w)


@pytest.mark.parametrize("loss", [
    lambda x, t: F.cross_entropy(x, t),  # the fused op
    lambda x, t: F.cross_entropy(x, t, label_smoothing=0.2),
    lambda x, t: F.cross_entropy(x, t, fg.tensor([1.0, 2.0, 0.5]), label_smoothing=0.2),
    lambda x, t: F.nll_loss(F.log_softmax(x, 1), t),
])
def test_mean_over_no_counted_target_is_nan_with_zero_gradient(loss) -> None:
    """torch: every target ignored gives the loss 0 / 0 = NaN but the gradient 0 (no target is counted), so one such
    batch leaves the parameters as they were; the gradient was NaN (1 / 0 times the ignored targets' 0)."""
    x = fg.tensor(A(2, 3), requires_grad=True)
    out = loss(x, fg.tensor([-100, -100]))
    out.backward()
    assert np.isnan(out.item())
    np.testing.assert_array_equal(x.grad.data, np.zeros((2, 3)))
    (g,) = fg.autograd.grad(loss(x, fg.tensor([2, -100])), x)  # one counted target: a finite gradient, its own
    assert np.isfinite(g.data).all() and g.data[0].any() and not g.data[1].any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_class_probability_cross_entropy_keeps_the_input_dtype(dtype) -> None:
    """The mean divides by the number of samples: an int, which made a float32 loss float64 as a NumPy int64."""
    x, p = fg.tensor(A(3, 4).astype(dtype)), fg.tensor(rng.dirichlet(np.ones(4), 3).astype(dtype))
    assert F.cross_entropy(x, p).dtype == dtype
    assert F.cross_entropy(fg.tensor(np.zeros((0, 4), dtype)), fg.tensor(np.zeros(0, int)), label_smoothing=0.1,
                           reduction="sum").dtype == dtype  # an empty log_softmax too
    assert F.softmax(fg.tensor(np.zeros((0, 4), dtype)), 1).dtype == dtype


def test_loss_errors() -> None:
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.nll_loss(fg.zeros(2, 3), fg.tensor([0, 5]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(fg.zeros(2), fg.zeros(2), reduction="foo")


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_regression_losses_warn_of_a_target_shape_that_broadcasts(name: str) -> None:
    """A (N, 1) output against (N,) targets broadcasts to an (N, N) loss: torch warns, and so do we."""
    with pytest.warns(UserWarning, match=r"Using a target size \(\(3,\)\) that is different to the input size "
                                         r"\(\(3, 1\)\)\. This will likely lead to incorrect results"):
        getattr(F, name)(fg.ones(3, 1), fg.zeros(3))
    with pytest.raises(RuntimeError, match="does not support (negative|non-positive) values"):
        F.smooth_l1_loss(fg.ones(2), fg.zeros(2), beta=-1.0) if name == "smooth_l1_loss" else \
            F.huber_loss(fg.ones(2), fg.zeros(2), delta=0.0)


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_losses_match_torch(reduction: str) -> None:
    p, t, w = rng.uniform(0.05, 0.95, (4, 3)), rng.uniform(0, 1, (4, 3)), rng.uniform(0.5, 2, (4, 3))
    compare(lambda x, y: F.binary_cross_entropy(x, y, w, reduction=reduction),
            lambda x, y: TF.binary_cross_entropy(x, y, torch.tensor(w), reduction=reduction), p, t)
    pw = rng.uniform(0.5, 2, 3)
    compare(lambda x, y: F.binary_cross_entropy_with_logits(x, y, w, reduction=reduction, pos_weight=pw),
            lambda x, y: TF.binary_cross_entropy_with_logits(x, y, torch.tensor(w), reduction=reduction,
                                                              pos_weight=torch.tensor(pw)), A(4, 3) * 3, t)


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_at_saturated_probabilities_matches_torch(reduction: str) -> None:
    """A sigmoid that saturates gives probabilities 0 and 1 exactly: torch's gradient (x - t) / max(x (1 - x),
    1e-12) is finite there; the clamped logs alone gave NaN (0 * inf), and 1e20 instead of 1e12 near 0."""
    p = np.array([[0.0, 1.0, 0.5, 1e-20], [1 - 1e-16, 1e-13, 0.3, 1.0]])
    t = np.array([[0.0, 1.0, 1.0, 1.0], [0.3, 0.5, 0.8, 0.0]])
    with np.errstate(divide="ignore", invalid="ignore"):  # torch's target gradient is inf where p is 0 or 1
        compare(lambda x: F.binary_cross_entropy(x, fg.tensor(t), reduction=reduction),
                lambda x: TF.binary_cross_entropy(x, torch.tensor(t), reduction=reduction), p)
    inner, inner_t = np.array([[0.5, 0.3], [0.9, 0.05]]), np.array([[1.0, 0.8], [0.2, 0.5]])  # second order inside
    x, y = fg.tensor(inner, requires_grad=True), fg.tensor(inner_t, requires_grad=True)
    x_ref, y_ref = torch.tensor(inner, requires_grad=True), torch.tensor(inner_t, requires_grad=True)
    grads = fg.autograd.grad(F.binary_cross_entropy(x, y, reduction=reduction).sum(), (x, y), create_graph=True)
    refs = torch.autograd.grad(TF.binary_cross_entropy(x_ref, y_ref, reduction=reduction).sum(), (x_ref, y_ref),
                               create_graph=True)
    for a, b in zip(grads, refs):
        np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-12)
    second = fg.autograd.grad((grads[0] * grads[0]).sum() + grads[1].sum(), (x, y))
    second_ref = torch.autograd.grad((refs[0] * refs[0]).sum() + refs[1].sum(), (x_ref, y_ref))
    for a, b in zip(second, second_ref):
        np.testing.assert_allclose(a.data, b.numpy(), rtol=1e-8)  # torch's double backward adds eps in places
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        F.binary_cross_entropy(x, y, fg.ones(2, 2, requires_grad=True))


def test_binary_cross_entropy_with_logits_gradient_by_hand() -> None:
    x = fg.tensor([0.0, 50.0, -50.0], requires_grad=True)
    F.binary_cross_entropy_with_logits(x, fg.tensor([1.0, 0.0, 1.0]), reduction="sum").backward()
    np.testing.assert_allclose(x.grad.data, [-0.5, 1.0, -1.0])  # sigmoid(x) - t, smooth at 0


@needs_torch
@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
def test_kl_div_matches_torch(reduction: str) -> None:
    t = rng.dirichlet(np.ones(4), 3)
    with_zero = t.copy()
    with_zero[0, 1] = 0.0  # t log t is 0 there (torch's gradient in t is NaN there, so compare values only)
    compare(lambda x: F.kl_div(x, fg.tensor(with_zero), reduction=reduction),
            lambda x: TF.kl_div(x, torch.tensor(with_zero), reduction=reduction), A(3, 4))
    compare(lambda x, y: F.kl_div(F.log_softmax(x, 1), y, reduction=reduction),
            lambda x, y: TF.kl_div(TF.log_softmax(x, 1), y, reduction=reduction), A(3, 4), t)
    compare(lambda x, y: F.kl_div(x, y, reduction=reduction, log_target=True),
            lambda x, y: TF.kl_div(x, y, reduction=reduction, log_target=True), A(3, 4), A(3, 4))


def test_losses_second_derivatives() -> None:
    x = fg.tensor(A(4, 3), requires_grad=True)
    target = fg.tensor([0, 2, 1, 1])
    assert gradgradcheck(lambda x: F.cross_entropy(x, target, label_smoothing=0.1), (x,))
    assert gradgradcheck(lambda x: F.binary_cross_entropy_with_logits(x, fg.tensor(np.full((4, 3), 0.3))), (x,))
    assert gradgradcheck(lambda x: F.huber_loss(x, fg.zeros(4, 3), delta=0.5), (x,))


def test_a_target_changed_in_place_before_the_backward_raises() -> None:
    """As torch: cross_entropy's rule reads the targets, so a change in place is caught, not a wrong gradient."""
    logits = fg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    target = fg.tensor([0, 1, 2])
    loss = F.cross_entropy(logits, target)
    target.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_a_class_weight_changed_in_place_after_the_loss_does_not_change_its_gradient(smoothing: float) -> None:
    """The weight is a constant of the loss: its value at the forward is the one the gradient uses."""
    data = np.random.default_rng(1).standard_normal((3, 4))
    grads = []
    for change in (False, True):
        logits = fg.tensor(data, requires_grad=True)
        weight = fg.tensor([1.0, 2.0, 3.0, 4.0])
        loss = F.cross_entropy(logits, fg.tensor([0, 1, 2]), weight=weight, label_smoothing=smoothing)
        if change:
            weight.mul_(10.0)
        loss.backward()
        grads.append(logits.grad.data)
    np.testing.assert_array_equal(grads[0], grads[1])


def test_embedding_indices_changed_in_place_before_the_backward_raise() -> None:
    """As torch: embedding's rule reads the indices, so a change in place is caught, not a gradient for the new
    rows (it gave rows 1 and 2 for indices [0, 1, 1] changed to [1, 2, 2])."""
    weight = fg.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    indices = fg.tensor([0, 1, 1])
    out = F.embedding(indices, weight)
    with fg.no_grad():
        indices.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_max_pool_indices_changed_between_the_first_and_the_second_backward_do_not_reach_it() -> None:
    """max_pool's rule reads its indices output; under create_graph it recorded max_unpool with a view of the
    returned indices' memory, so changing them in place before the second backward changed its result with no
    error ([0, 2, 8, 10] for the maxima's [5, 6, 13, 11]); now it keeps the indices the first backward read."""
    data = np.random.default_rng(0).standard_normal((1, 1, 4, 4))
    grads = []
    for change in (False, True):
        x = fg.tensor(data, requires_grad=True)
        values, indices = F.max_pool2d(x, 2, return_indices=True)
        v = fg.ones(1, 1, 2, 2, requires_grad=True)
        (gx,) = fg.autograd.grad((values * v).sum(), x, create_graph=True)
        if change:
            with fg.no_grad():
                indices.copy_(fg.tensor([[[[0, 2], [8, 10]]]]))
        (gv,) = fg.autograd.grad((gx * fg.tensor(np.arange(16.0).reshape(1, 1, 4, 4))).sum(), v)
        grads.append(gv.data)
    np.testing.assert_array_equal(grads[1], grads[0])
