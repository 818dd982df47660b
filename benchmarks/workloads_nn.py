"""The nn workloads (issue 15): a training step of the seeds' MNIST ``Net`` and the mlp written with ``nn.Linear``.

convnet-step: one SGD(momentum) step (zero_grad, forward, backward, update) of conv 1→20 5×5, max-pool 2,
conv 20→50 5×5, max-pool 2, linear 800→500, linear 500→10, log_softmax + nll_loss on 64 images 1×28×28,
float64 everywhere; each runner returns the updated parameters (the first call of every variant starts
from the same weights, so they must agree). The NumPy limit is hand-written: im2col + one matrix product
per convolution, col2im for the input gradient, the argmax mask of each pooling window.

mlp-module: the mlp workload's gradient with the model built from ``nn.Linear`` and ``nn.Tanh`` (and
the same loss), beside the functional funcgrad version: the cost of the module layer.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from benchmarks.frameworks import _funcgrad, installed
from benchmarks.harness import Runner, Sizes, Target, Workload
from benchmarks.workloads import mlp, mlp_numpy, mlp_setup

LR, MOMENTUM = 0.01, 0.9
NAMES = ("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight", "fc1.bias", "fc2.weight",
         "fc2.bias")


def _init(rng: np.random.Generator, batch: int) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Images, labels and torch-style U(-1/sqrt(fan_in), 1/sqrt(fan_in)) parameters."""
    shapes = {"conv1.weight": (20, 1, 5, 5), "conv2.weight": (50, 20, 5, 5), "fc1.weight": (500, 800),
              "fc2.weight": (10, 500)}
    params = {}
    for name, shape in shapes.items():
        bound = 1 / np.sqrt(np.prod(shape[1:]))
        params[name] = rng.uniform(-bound, bound, shape)
        params[name.replace("weight", "bias")] = rng.uniform(-bound, bound, shape[0])
    return rng.standard_normal((batch, 1, 28, 28)), rng.integers(0, 10, batch), {k: params[k] for k in NAMES}


# ----- funcgrad and torch: the seeds' Net, as written ---------------------------------------------
def _net(nn: Any, F: Any) -> Any:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 20, 5, 1)
            self.conv2 = nn.Conv2d(20, 50, 5, 1)
            self.fc1 = nn.Linear(4 * 4 * 50, 500)
            self.fc2 = nn.Linear(500, 10)

        def forward(self, x: Any) -> Any:
            x = F.max_pool2d(F.relu(self.conv1(x)), 2, 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2, 2)
            x = F.relu(self.fc1(x.view(-1, 4 * 4 * 50)))
            return F.log_softmax(self.fc2(x), dim=1)

    return Net()


def _step_runner(framework: Any, nn: Any, F: Any, optim: Any, x: Any, y: Any, params: dict[str, np.ndarray],
                 out: Any) -> Runner:
    model = _net(nn, F)
    if framework.__name__ == "torch":
        model = model.double()
    model.load_state_dict({k: framework.tensor(v) for k, v in params.items()})
    opt = optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)

    def step() -> list[np.ndarray]:
        opt.zero_grad()
        F.nll_loss(model(x), y).backward()
        opt.step()
        return [out(p) for p in model.parameters()]

    return step


# ----- the NumPy limit ------------------------------------------------------------------------------
def _im2col(x: np.ndarray, k: int) -> np.ndarray:
    """(N, C, H, W) -> (N, C k k, Ho Wo): one copy of the sliding windows."""
    n, c, h, w = x.shape
    cols = sliding_window_view(x, (k, k), axis=(2, 3))  # (N, C, Ho, Wo, k, k)
    return cols.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * k * k, (h - k + 1) * (w - k + 1))


def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cols = _im2col(x, w.shape[-1])
    out = np.matmul(w.reshape(w.shape[0], -1), cols)
    out += b[:, None]
    side = x.shape[-1] - w.shape[-1] + 1
    return out.reshape(x.shape[0], w.shape[0], side, side), cols


def _pool(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2×2 max pooling and the mask of each window's (first) maximum."""
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)
    arg = win.argmax(-1)
    return np.take_along_axis(win, arg[..., None], -1)[..., 0], arg


def _unpool(g: np.ndarray, arg: np.ndarray) -> np.ndarray:
    n, c, h, w = g.shape
    out = np.zeros((n, c, h, w, 4))
    np.put_along_axis(out, arg[..., None], g[..., None], -1)
    return out.reshape(n, c, h, w, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, 2 * h, 2 * w)


def _col2im(cols: np.ndarray, shape: tuple[int, ...], k: int) -> np.ndarray:
    """The adjoint of _im2col: cols (N, C k k, Ho Wo) added back into (N, C, H, W)."""
    n, c, h, w = shape
    ho, wo = h - k + 1, w - k + 1
    cols = cols.reshape(n, c, k, k, ho, wo)
    out = np.zeros(shape)
    for i in range(k):
        for j in range(k):
            out[:, :, i:i + ho, j:j + wo] += cols[:, :, i, j]
    return out


def _numpy_step(x: np.ndarray, y: np.ndarray, params: dict[str, np.ndarray]) -> Runner:
    p = {k: v.copy() for k, v in params.items()}
    buffers: dict[str, np.ndarray] = {}

    def step() -> list[np.ndarray]:
        w1, b1, w2, b2, w3, b3, w4, b4 = (p[k] for k in NAMES)
        c1, cols1 = _conv(x, w1, b1)
        r1 = np.maximum(c1, 0)
        p1, arg1 = _pool(r1)
        c2, cols2 = _conv(p1, w2, b2)
        r2 = np.maximum(c2, 0)
        p2, arg2 = _pool(r2)
        f = p2.reshape(len(x), -1)
        h = f @ w3.T
        h += b3
        np.maximum(h, 0, out=h)
        z = h @ w4.T
        z += b4
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        total = e.sum(axis=1, keepdims=True)
        rows = np.arange(len(y))
        np.mean(np.log(total[:, 0]) - z[rows, y])
        e /= total
        e[rows, y] -= 1.0
        e /= len(y)                                       # dz
        grads = {"fc2.weight": e.T @ h, "fc2.bias": e.sum(0)}
        dh = e @ w4
        dh *= h > 0
        grads["fc1.weight"], grads["fc1.bias"] = dh.T @ f, dh.sum(0)
        dc2 = _unpool((dh @ w3).reshape(p2.shape), arg2)
        dc2 *= c2 > 0
        g2 = dc2.reshape(len(x), 50, -1)
        grads["conv2.weight"] = np.tensordot(g2, cols2, axes=([0, 2], [0, 2])).reshape(w2.shape)
        grads["conv2.bias"] = g2.sum((0, 2))
        dp1 = _col2im(np.matmul(w2.reshape(50, -1).T, g2), p1.shape, 5)
        dc1 = _unpool(dp1, arg1)
        dc1 *= c1 > 0
        g1 = dc1.reshape(len(x), 20, -1)
        grads["conv1.weight"] = np.tensordot(g1, cols1, axes=([0, 2], [0, 2])).reshape(w1.shape)
        grads["conv1.bias"] = g1.sum((0, 2))
        for k in NAMES:                                   # SGD with momentum, as torch
            if k in buffers:
                buffers[k] *= MOMENTUM
                buffers[k] += grads[k]
            else:
                buffers[k] = grads[k].copy()
            p[k] -= LR * buffers[k]
        return [p[k].copy() for k in NAMES]

    return step


def _convnet(sizes: Sizes, frameworks: frozenset[str] | None) -> dict[str, Runner]:
    x, y, params = _init(np.random.default_rng(0), sizes["batch"])
    wanted = {"numpy", "funcgrad", "torch"} if frameworks is None else frameworks | {"numpy"}
    runners = {"numpy": _numpy_step(x, y, params)}
    if "funcgrad" in wanted:
        import funcgrad as fg

        runners["funcgrad"] = _step_runner(fg, fg.nn, fg.nn.functional, fg.optim, fg.tensor(x), fg.tensor(y), params,
                                           lambda t: t.data.copy())
    if "torch" in wanted and installed("torch"):
        import torch

        runners["torch"] = _step_runner(torch, torch.nn, torch.nn.functional, torch.optim, torch.tensor(x),
                                        torch.tensor(y), params, lambda t: t.detach().numpy().copy())
    return runners


# ----- mlp-module ------------------------------------------------------------------------------------
def _mlp_module(sizes: Sizes, frameworks: frozenset[str] | None) -> dict[str, Runner]:
    import funcgrad as fg

    (x, labels), params = mlp_setup(np.random.default_rng(0), **sizes)
    widths = sizes["widths"]
    layers: list[Any] = []
    for i, (fan_in, fan_out) in enumerate(zip(widths, widths[1:])):
        layers.append(fg.nn.Linear(fan_in, fan_out))
        layers[-1].load_state_dict({"weight": params[2 * i].T, "bias": params[2 * i + 1]})
        layers.append(fg.nn.Tanh())
    model = fg.nn.Sequential(*layers[:-1])
    xs, ys, rows = fg.tensor(x), fg.tensor(labels), fg.arange(len(labels))

    def module_grads() -> list[np.ndarray]:
        loss = -fg.mean(fg.log_softmax(model(xs), -1)[rows, ys])  # the mlp workload's loss
        grads = fg.autograd.grad(loss, list(model.parameters()))
        return [g.data.T if g.ndim == 2 else g.data for g in grads]

    functional_grads = _funcgrad(mlp, (x, labels), params)  # the mlp workload's funcgrad row

    return {"numpy": lambda: mlp_numpy(x, labels, *params), "funcgrad": module_grads,
            "fg functional": functional_grads}


WORKLOADS = [
    Workload("convnet-step", "SGD(momentum) step of the seeds' MNIST Net, batch 64 × 1×28×28, float64", _convnet,
             sizes={"batch": 64}, small_sizes={"batch": 2},
             targets=(Target(("torch",), 1.5, "within 1.5x of torch"),
                      Target(("numpy",), 1.2, "within 1.2x of the hand-written NumPy limit")),
             rtol=1e-6, collect_garbage=True),
    Workload("mlp-module", "the mlp gradient with the model built from nn.Linear/nn.Tanh vs the functional one",
             _mlp_module, sizes={"batch": 64, "widths": (784, 256, 256, 10)},
             small_sizes={"batch": 4, "widths": (6, 5, 5, 3)},
             targets=(Target(("fg functional",), 1.05, "module overhead within 1.05x of the functional mlp"),),
             collect_garbage=True),
]

