"""The first-order workloads (issue 2): a loss per workload, its hand-written NumPy gradient, targets.

Everything is float64 in every framework, so all variants do the same arithmetic and must agree to
near rounding. Each hand-written NumPy variant computes the forward value too (as the frameworks
must) and then the hand-derived backward, in place wherever that saves a temporary.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.frameworks import Problem, gradient_workload
from benchmarks.harness import Target

AS_FAST_AS_TORCH = Target(("torch",), 1.0, "no slower than torch")
NEAR_NUMPY = Target(("numpy",), 1.2, "within 1.2x of the hand-written NumPy limit")


def chain_setup(rng: np.random.Generator, n: int, rounds: int) -> Problem:
    """A length-``n`` vector to push through ``rounds`` rounds."""
    return (rounds,), (rng.standard_normal(n),)


# ----- tiny-chain: per-op overhead on a 16-element vector ------------------------------------------
def sine_chain(m: Any, rounds: int, x: Any) -> Any:
    """``rounds`` rounds of ``y = sin(y) * 1.01 + 0.1``, then the sum (3 ops a round, plus 1)."""
    y = x
    for _ in range(rounds):
        y = m.sin(y) * 1.01 + 0.1
    return m.sum(y)


def sine_chain_numpy(rounds: int, x: np.ndarray) -> list[np.ndarray]:
    """d/dx: the product of ``1.01 * cos`` of every round's input."""
    inputs = []
    y = x
    for _ in range(rounds):
        inputs.append(y)
        y = np.sin(y)
        y *= 1.01
        y += 0.1
    y.sum()
    g = np.full_like(x, 1.01 ** rounds)
    for y in reversed(inputs):
        g *= np.cos(y)
    return [g]


# ----- deep-chain: a 20,000-op graph on 4 elements -------------------------------------------------
def affine_chain(m: Any, rounds: int, x: Any) -> Any:
    """``rounds`` rounds of ``y = y * 0.9999 + 0.0001``, then the sum (2 ops a round, plus 1)."""
    y = x
    for _ in range(rounds):
        y = y * 0.9999 + 0.0001
    return m.sum(y)


def affine_chain_numpy(rounds: int, x: np.ndarray) -> list[np.ndarray]:
    """d/dx is the constant ``0.9999 ** rounds``; only the forward loop costs anything."""
    y = x
    for _ in range(rounds):
        y = y * 0.9999
        y += 0.0001
    y.sum()
    return [np.full_like(x, 0.9999 ** rounds)]


# ----- big-elementwise: kernels and temporaries on 1e6 elements ------------------------------------
def big_setup(rng: np.random.Generator, n: int) -> Problem:
    """One vector of ``n`` elements."""
    return (), (rng.standard_normal(n),)


def exp_sin(m: Any, x: Any) -> Any:
    """``sum(exp(sin(x)) * x**2)``."""
    return m.sum(m.exp(m.sin(x)) * x ** 2)


def exp_sin_numpy(x: np.ndarray) -> list[np.ndarray]:
    """d/dx = ``e * (cos(x) * x**2 + 2x)`` with ``e = exp(sin(x))``."""
    e = np.sin(x)
    np.exp(e, out=e)
    x2 = np.square(x)
    (e * x2).sum()
    g = np.cos(x)
    g *= x2
    g += x
    g += x
    g *= e
    return [g]


# ----- mlp: a small classifier, matmul-bound -------------------------------------------------------
def mlp_setup(rng: np.random.Generator, batch: int, widths: Sequence[int]) -> Problem:
    """Inputs and fixed labels (constants), then ``W1, b1, W2, b2, ...`` (parameters)."""
    x = rng.standard_normal((batch, widths[0]))
    labels = rng.integers(0, widths[-1], batch)
    params: list[np.ndarray] = []
    for fan_in, fan_out in zip(widths, widths[1:]):
        params += [rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in), 0.1 * rng.standard_normal(fan_out)]
    return (x, labels), tuple(params)


def mlp(m: Any, x: Any, labels: Any, *params: Any) -> Any:
    """tanh hidden layers, then log_softmax and the mean negative log-likelihood of ``labels``."""
    h = x
    for W, b in zip(params[:-2:2], params[1:-2:2]):
        h = m.tanh(h @ W + b)
    logp = m.log_softmax(h @ params[-2] + params[-1])
    return -m.mean(logp[m.arange(labels.shape[0]), labels])


def mlp_numpy(x: np.ndarray, labels: np.ndarray, *params: np.ndarray) -> list[np.ndarray]:
    """Backpropagation by hand: ``softmax - onehot`` at the top, ``(1 - h**2)`` through each tanh."""
    weights, biases = params[::2], params[1::2]
    layer_inputs = [x]
    for W, b in zip(weights[:-1], biases[:-1]):
        a = layer_inputs[-1] @ W
        a += b
        layer_inputs.append(np.tanh(a, out=a))
    z = layer_inputs[-1] @ weights[-1]
    z += biases[-1]
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    total = p.sum(axis=1, keepdims=True)
    rows = np.arange(len(labels))
    np.mean(np.log(total[:, 0]) - z[rows, labels])
    p /= total                       # softmax; d(loss)/dz = (softmax - onehot) / batch
    p[rows, labels] -= 1.0
    p /= len(labels)
    g, grads = p, []
    for i in reversed(range(len(weights))):
        h = layer_inputs[i]
        grads += [g.sum(axis=0), h.T @ g]
        if i:
            g = g @ weights[i].T
            slope = np.square(h)
            np.subtract(1.0, slope, out=slope)
            g *= slope
    return grads[::-1]


WORKLOADS = [
    gradient_workload("tiny-chain", "16 float64, 100 × (sin, *1.01, +0.1), sum: 301 ops", chain_setup, sine_chain,
                      sine_chain_numpy, sizes={"n": 16, "rounds": 100}, small_sizes={"n": 16, "rounds": 5},
                      ops=lambda s: 3 * s["rounds"] + 1,
                      targets=(Target(("torch",), 1.0, "per-op cost no more than torch's"),
                               Target(("torch",), 0.6, "per-op cost at most 0.6x torch's (issue 19)"))),
    gradient_workload("mlp", "batch 64, 784-256-256-10, tanh, log_softmax + mean NLL, float64", mlp_setup, mlp,
                      mlp_numpy, sizes={"batch": 64, "widths": (784, 256, 256, 10)},
                      small_sizes={"batch": 4, "widths": (6, 5, 5, 3)}, targets=(NEAR_NUMPY,)),
    gradient_workload("big-elementwise", "sum(exp(sin(x)) * x**2), 1,000,000 float64", big_setup, exp_sin,
                      exp_sin_numpy, sizes={"n": 1_000_000}, small_sizes={"n": 100}, targets=(NEAR_NUMPY,)),
    gradient_workload("deep-chain", "4 float64, 10,000 × (*0.9999, +0.0001), sum: 20,001 ops", chain_setup,
                      affine_chain, affine_chain_numpy, sizes={"n": 4, "rounds": 10_000},
                      small_sizes={"n": 4, "rounds": 20}, ops=lambda s: 2 * s["rounds"] + 1,
                      targets=(AS_FAST_AS_TORCH, Target(("numpy",), 5.0, "within 5x of the hand-written NumPy "
                                                                          "limit, garbage collector on (issue 19)"))),
]
