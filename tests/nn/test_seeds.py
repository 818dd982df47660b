"""The seeds' module examples: the MNIST Net with its hooks, model.eval() vs no_grad, a ScipyConv2d module
wrapping a custom Function with nn.Parameters, jacobian/hessian through Linear and AvgPool2d, and
functional_call under the function transforms."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import convolve2d, correlate2d

import funcgrad as fg
from funcgrad import nn
from funcgrad.autograd import Function
from funcgrad.check import gradcheck, gradgradcheck
from funcgrad.func import functional_call, grad, jacrev
from funcgrad.nn import functional as F
from tests.nn.torch_compare import needs_torch, torch


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 20, 5, 1)
        self.conv2 = nn.Conv2d(20, 50, 5, 1)
        self.fc1 = nn.Linear(4 * 4 * 50, 500)
        self.fc2 = nn.Linear(500, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(x, 2, 2)
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2, 2)
        x = x.view(-1, 4 * 4 * 50)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


if torch is not None:
    class TorchNet(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = torch.nn.Conv2d(1, 20, 5, 1)
            self.conv2 = torch.nn.Conv2d(20, 50, 5, 1)
            self.fc1 = torch.nn.Linear(4 * 4 * 50, 500)
            self.fc2 = torch.nn.Linear(500, 10)

        def forward(self, x):
            TF = torch.nn.functional
            x = TF.max_pool2d(TF.relu(self.conv1(x)), 2, 2)
            x = TF.max_pool2d(TF.relu(self.conv2(x)), 2, 2)
            x = TF.relu(self.fc1(x.view(-1, 4 * 4 * 50)))
            return TF.log_softmax(self.fc2(x), dim=1)


def _shapes(grads):
    return [None if g is None else tuple(g.shape) for g in grads]


@needs_torch
def test_mnist_net_hooks_report_what_torch_reports() -> None:
    ours, theirs = Net(), TorchNet().double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    log: dict[str, list] = {"ours": [], "theirs": []}
    for key, model in (("ours", ours), ("theirs", theirs)):
        record = log[key]
        model.conv2.register_forward_pre_hook(lambda m, inp, record=record: record.append(("pre", _shapes(inp))))
        model.conv2.register_forward_hook(lambda m, inp, out, record=record: record.append(
            ("forward", _shapes(inp), tuple(out.shape))))
        model.conv2.register_backward_hook(lambda m, gi, go, record=record: record.append(
            ("backward", _shapes(gi), _shapes(go))))
        model.fc2.register_full_backward_hook(lambda m, gi, go, record=record: record.append(
            ("fc2", _shapes(gi), _shapes(go))))
    x = np.random.default_rng(0).normal(size=(4, 1, 28, 28))
    target = np.array([1, 0, 4, 9])
    out = ours(fg.tensor(x))
    expected = theirs(torch.tensor(x))
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-9)
    F.nll_loss(out, fg.tensor(target)).backward()
    torch.nn.functional.nll_loss(expected, torch.tensor(target)).backward()
    assert log["ours"] == log["theirs"]
    assert ("backward", [(4, 20, 12, 12), (50, 20, 5, 5), (50,)], [(4, 50, 8, 8)]) in log["ours"]
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(ours.get_parameter(name).grad.data, p.grad.numpy(), rtol=1e-8, atol=1e-12)


def test_eval_vs_no_grad() -> None:
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.BatchNorm1d(4))
    x = fg.randn(8, 4, seed=1)
    model.eval()
    out = model(x)
    assert out.requires_grad  # eval changes layer behaviour, not gradient recording
    np.testing.assert_array_equal(out.data, model(x).data)  # deterministic in eval mode
    with fg.no_grad():
        assert not model(x).requires_grad


class ScipyConv2dFunction(Function):
    @staticmethod
    def forward(ctx, input, filter, bias):
        input, filter, bias = input.detach(), filter.detach(), bias.detach()
        result = correlate2d(input.numpy(), filter.numpy(), mode="valid")
        result += bias.numpy()
        ctx.save_for_backward(input, filter, bias)
        return fg.as_tensor(result, dtype=input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        grad_output = grad_output.detach()
        input, filter, bias = ctx.saved_tensors
        grad_output = grad_output.numpy()
        grad_bias = np.sum(grad_output, keepdims=True)
        grad_input = convolve2d(grad_output, filter.numpy(), mode="full")
        grad_filter = correlate2d(input.numpy(), grad_output, mode="valid")
        return fg.from_numpy(grad_input), fg.from_numpy(grad_filter), fg.from_numpy(grad_bias)


class ScipyConv2d(nn.Module):
    def __init__(self, filter_width, filter_height):
        super().__init__()
        self.filter = nn.Parameter(fg.randn(filter_width, filter_height, seed=0))
        self.bias = nn.Parameter(fg.randn(1, 1, seed=1))

    def forward(self, input):
        return ScipyConv2dFunction.apply(input, self.filter, self.bias)


def test_scipy_conv2d_module() -> None:
    module = ScipyConv2d(3, 3)
    assert [n for n, _ in module.named_parameters()] == ["filter", "bias"]
    x = fg.randn(10, 10, seed=2, requires_grad=True)
    output = module(x)
    g = fg.randn(8, 8, seed=3)
    output.backward(g)
    assert module.filter.grad.shape == (3, 3) and module.bias.grad.shape == (1, 1)
    assert gradcheck(module, (x,), eps=1e-6, atol=1e-4)
    # the same layer written with the table's convolution: same values and gradients, and second derivatives
    conv = nn.Conv2d(1, 1, 3)
    conv.load_state_dict({"weight": module.filter.detach().numpy()[None, None],
                          "bias": module.bias.detach().numpy().reshape(1)})
    x2 = fg.tensor(x.detach().numpy(), requires_grad=True)
    out2 = conv(x2[None, None])[0, 0]
    np.testing.assert_allclose(out2.data, output.data, rtol=1e-12)
    out2.backward(g)
    np.testing.assert_allclose(x2.grad.data, x.grad.data, rtol=1e-10)
    np.testing.assert_allclose(conv.weight.grad.data[0, 0], module.filter.grad.data, rtol=1e-10)
    assert gradgradcheck(lambda t: conv(t[None, None]), (x2,))


@needs_torch
def test_jacobian_through_linear_and_avg_pool() -> None:
    ours, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(4).normal(size=(4, 3))
    jac = fg.functional.jacobian(ours, fg.tensor(x))
    expected = torch.autograd.functional.jacobian(theirs, torch.tensor(x))
    np.testing.assert_allclose(jac.data, expected.numpy(), rtol=1e-12)
    assert jac.shape == (4, 2, 4, 3)
    pool = nn.AvgPool2d(2)
    image = np.random.default_rng(5).normal(size=(1, 1, 4, 4))
    jac = fg.functional.jacobian(pool, fg.tensor(image), vectorize=True)
    expected = torch.autograd.functional.jacobian(torch.nn.AvgPool2d(2), torch.tensor(image))
    np.testing.assert_allclose(jac.data, expected.numpy())
    hess = fg.functional.hessian(lambda t: (pool(t) ** 3).sum(), fg.tensor(image))
    expected = torch.autograd.functional.hessian(lambda t: (torch.nn.AvgPool2d(2)(t) ** 3).sum(), torch.tensor(image))
    np.testing.assert_allclose(hess.data, expected.numpy(), rtol=1e-10, atol=1e-14)


def test_functional_call_under_func_grad() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    params = {k: v.detach().numpy().copy() for k, v in model.named_parameters()}
    x, y = np.random.default_rng(6).normal(size=(5, 3)), np.ones((5, 1))

    def loss(p):
        return F.mse_loss(functional_call(model, p, (x,)), y)

    grads = grad(loss)(params)
    F.mse_loss(model(fg.tensor(x)), fg.tensor(y)).backward()
    for name, p in model.named_parameters():
        np.testing.assert_allclose(grads[name], p.grad.data, rtol=1e-12)
    assert model[0].weight.data is not None and isinstance(model[0].weight, nn.Parameter)  # restored
    jac = jacrev(lambda w: functional_call(model, {"2.weight": w}, x))(params["2.weight"])
    assert jac.shape == (5, 1, 1, 4)
    with pytest.raises(RuntimeError, match="Missing key"):
        functional_call(model, {"0.weight": np.zeros((4, 3))}, (x,), strict=True)
    square = nn.Linear(3, 3)
    tied = nn.Sequential(square, nn.Tanh(), square)  # shared weights: one value serves every name
    out = functional_call(tied, {"0.weight": np.zeros((3, 3))}, (fg.ones(1, 3),))
    np.testing.assert_allclose(out.data, square.bias.data[None], rtol=1e-12)  # 0 @ tanh(b) + b
    assert np.abs(square.weight.data).sum() > 0  # the module's own weight is back
    same = np.zeros((3, 3))
    functional_call(tied, {"0.weight": same, "2.weight": same}, (fg.ones(1, 3),))  # one value for both: fine
    with pytest.raises(ValueError, match=r"multiple values for keys \['0.weight', '2.weight'\], which are tied"):
        functional_call(tied, {"0.weight": same, "2.weight": np.ones((3, 3))}, (fg.ones(1, 3),))  # torch's error
