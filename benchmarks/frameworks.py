"""Gradient workloads: one loss written once, run by every installed autodiff framework.

A loss is written against a namespace ``m`` holding the few functions it needs (``m.sin``, ``m.sum``,
``m.log_softmax`` over the last axis, ...): the namespace is funcgrad, torch or ``autograd.numpy``, so
the frameworks run literally the same expression. The hand-written NumPy forward plus backward (the
limit) is given beside it. :func:`gradient_workload` turns both into a :class:`Workload`.
"""
from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from benchmarks.harness import Runner, Sizes, Target, Workload

Loss = Callable[..., Any]
Problem = tuple[tuple[Any, ...], tuple[np.ndarray, ...]]  # (constants, parameters)

_SHARED = ("sin", "cos", "exp", "tanh", "sum", "mean", "arange")


def _namespace(module: Any, **extra: Callable[..., Any]) -> SimpleNamespace:
    """The functions a loss may call, taken from ``module`` (plain attributes: no lookup overhead)."""
    return SimpleNamespace(**{name: getattr(module, name) for name in _SHARED}, **extra)


def _funcgrad(loss: Loss, consts: Sequence[Any], params: Sequence[np.ndarray]) -> Runner:
    import funcgrad as fg

    m = _namespace(fg, log_softmax=lambda z: fg.log_softmax(z, dim=-1))
    cs = [fg.tensor(c) if isinstance(c, np.ndarray) else c for c in consts]
    ps = [fg.tensor(p, requires_grad=True) for p in params]
    return lambda: [g.data for g in fg.autograd.grad(loss(m, *cs, *ps), ps)]


def _torch(loss: Loss, consts: Sequence[Any], params: Sequence[np.ndarray]) -> Runner:
    import torch

    m = _namespace(torch, log_softmax=lambda z: torch.log_softmax(z, dim=-1))
    cs = [torch.tensor(c) if isinstance(c, np.ndarray) else c for c in consts]
    ps = [torch.tensor(p, requires_grad=True) for p in params]
    return lambda: [g.numpy() for g in torch.autograd.grad(loss(m, *cs, *ps), ps)]


def _autograd(loss: Loss, consts: Sequence[Any], params: Sequence[np.ndarray]) -> Runner:
    import autograd
    import autograd.numpy as anp
    from autograd.scipy.special import logsumexp

    m = _namespace(anp, log_softmax=lambda z: z - logsumexp(z, axis=-1, keepdims=True))
    gradient = autograd.grad(lambda ps: loss(m, *consts, *ps))
    return lambda: gradient(list(params))


# label -> (module that must be importable, adapter); None marks the hand-written NumPy reference
FRAMEWORKS: dict[str, tuple[str, Callable[[Loss, Sequence[Any], Sequence[np.ndarray]], Runner] | None]] = {
    "funcgrad": ("funcgrad", _funcgrad),
    "numpy": ("numpy", None),
    "torch": ("torch", _torch),
    "autograd": ("autograd", _autograd),
}


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    return importlib.util.find_spec(module) is not None


def gradient_workload(name: str, about: str, setup: Callable[..., Problem], loss: Loss,
                      numpy_grad: Callable[..., Sequence[np.ndarray]], sizes: Sizes, small_sizes: Sizes,
                      ops: Callable[[Sizes], int] | None = None, targets: tuple[Target, ...] = (),
                      rtol: float = 1e-7) -> Workload:
    """A workload timing the gradient of ``loss`` w.r.t. its parameters in every installed framework.

    Args:
        setup: ``setup(rng, **sizes)`` returns ``(constants, parameters)``; constant arrays become the
            framework's tensors (other constants are passed as they are), parameters become leaves.
        loss: ``loss(m, *constants, *parameters)``, a scalar, written with the namespace ``m``.
        numpy_grad: ``numpy_grad(*constants, *parameters)``, the hand-written forward and backward,
            returning one gradient per parameter (the reference every framework must agree with).
    """
    def build(chosen: Sizes, frameworks: frozenset[str] | None) -> dict[str, Runner]:
        consts, params = setup(np.random.default_rng(0), **chosen)
        wanted = {"numpy"} | (set(FRAMEWORKS) if frameworks is None else frameworks)  # numpy: the reference
        return {label: adapter(loss, consts, params) if adapter else lambda: numpy_grad(*consts, *params)
                for label, (module, adapter) in FRAMEWORKS.items() if label in wanted and installed(module)}

    return Workload(name, about, build, sizes, small_sizes, ops, targets, rtol=rtol)


def match_threads() -> str:
    """Give torch as many threads as NumPy's BLAS uses; say what was done.

    OpenBLAS (NumPy's BLAS) uses ``OPENBLAS_NUM_THREADS`` or ``OMP_NUM_THREADS`` threads when set,
    else one per CPU; NumPy's elementwise kernels use one thread whatever the setting.
    """
    env = next((var for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS") if os.environ.get(var)), None)
    threads = int(os.environ[env]) if env else os.cpu_count() or 1
    source = f"${env}" if env else "one per CPU, OpenBLAS's default"
    if not installed("torch"):
        return f"threads: NumPy BLAS {threads} ({source}); torch not installed"
    import torch

    torch.set_num_threads(threads)
    return (f"threads: NumPy BLAS {threads} ({source}), torch.set_num_threads({threads}); "
            "NumPy elementwise kernels are single-threaded, torch's may use every thread on big tensors")
