"""The "numpy-code" workload (issue 14): NumPy code, as written, differentiated by ``funcgrad.func.grad``.

The mlp loss is written once as NumPy code (``np.*`` calls and ndarray methods, against a module
``np``). funcgrad runs it with NumPy itself on Tensors (NumPy's protocols dispatch to the op table),
HIPS autograd with ``autograd.numpy``; beside them the same loss in funcgrad's own namespace (what the
protocol dispatch must cost no more than) and the hand-written NumPy limit.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy

from benchmarks.frameworks import Problem, installed
from benchmarks.harness import Runner, Sizes, Target, Workload
from benchmarks.workloads import mlp_numpy, mlp_setup


def mlp_numpy_code(np: Any, x: Any, labels: Any, *params: Any) -> Any:
    """The mlp loss as NumPy code: tanh layers, a stable log-softmax, the mean NLL of ``labels``."""
    h = x
    for W, b in zip(params[:-2:2], params[1:-2:2]):
        h = np.tanh(np.dot(h, W) + b)
    z = np.dot(h, params[-2]) + params[-1]
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.mean(logp[np.arange(len(labels)), labels])


def mlp_funcgrad_namespace(fg: Any, x: Any, labels: Any, *params: Any) -> Any:
    """The same loss, op for op, in funcgrad's namespace."""
    h = x
    for W, b in zip(params[:-2:2], params[1:-2:2]):
        h = fg.tanh(fg.matmul(h, W) + b)
    z = fg.matmul(h, params[-2]) + params[-1]
    z = z - fg.amax(z, 1, True)
    logp = z - fg.log(fg.sum(fg.exp(z), 1, True))
    return -fg.mean(logp[numpy.arange(len(labels)), labels])


def _funcgrad(loss: Any, m: Any, consts: Sequence[Any], params: Sequence[numpy.ndarray]) -> Runner:
    import funcgrad.func

    gradient = funcgrad.func.grad(lambda *ps: loss(m, *consts, *ps), argnums=tuple(range(len(params))))
    return lambda: list(gradient(*params))


def _autograd(consts: Sequence[Any], params: Sequence[numpy.ndarray]) -> Runner:
    import autograd
    import autograd.numpy as anp

    gradient = autograd.grad(lambda ps: mlp_numpy_code(anp, *consts, *ps))
    return lambda: gradient(list(params))


def _build(sizes: Sizes, frameworks: frozenset[str] | None) -> dict[str, Runner]:
    import funcgrad as fg

    problem: Problem = mlp_setup(numpy.random.default_rng(0), **sizes)
    consts, params = problem
    variants: dict[str, Runner] = {
        "funcgrad": _funcgrad(mlp_numpy_code, numpy, consts, params),
        "fg namespace": _funcgrad(mlp_funcgrad_namespace, fg, consts, params),
        "numpy": lambda: mlp_numpy(*consts, *params),
    }
    if installed("autograd"):
        variants["autograd"] = _autograd(consts, params)
    return {label: run for label, run in variants.items()
            if frameworks is None or label in {"funcgrad", "numpy"} | frameworks}


WORKLOADS = [
    Workload("numpy-code", "the mlp loss as NumPy code (np.* calls, ndarray methods) under funcgrad.func.grad, "
             "784-256-256-10, batch 64", _build, sizes={"batch": 64, "widths": (784, 256, 256, 10)},
             small_sizes={"batch": 4, "widths": (6, 5, 5, 3)},
             targets=(Target(("numpy",), 1.3, "within 1.3x of the hand-written NumPy limit"),
                      Target(("autograd",), 1.0, "faster than HIPS autograd running the same source"),
                      Target(("fg namespace",), 1.1, "within 1.1x of the funcgrad-namespace version"))),
]
