"""A lower bound for any reverse-mode tape written in Python: the per-op workloads' chains on the smallest tape
that can still differentiate them (a Wengert list of ``(output, input, rule, saved)``, gradients in a dict; no
graph objects, no version checks, no hooks, no broadcasting, no dtypes, no dispatch, no thread safety).

    python -m benchmarks.python_floor

What it prints is what Python itself costs per recorded op, kernels included; funcgrad's per-op profile
(``python -m benchmarks.per_op_profile``) is to be read against it.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np


class Var:
    """A value on the tape."""

    __slots__ = ("data",)

    def __init__(self, data: np.ndarray) -> None:
        self.data = data


TAPE: list[tuple[Var, Var, Callable[[np.ndarray, Any], np.ndarray], Any]] = []


def _sin_rule(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    return g * np.cos(x)


def _scale_rule(g: np.ndarray, c: float) -> np.ndarray:
    return g * c


def _pass_rule(g: np.ndarray, _: Any) -> np.ndarray:
    return g


def sin(x: Var) -> Var:
    out = Var(np.sin(x.data))
    TAPE.append((out, x, _sin_rule, x.data))
    return out


def scale(x: Var, c: float) -> Var:
    out = Var(x.data * c)
    TAPE.append((out, x, _scale_rule, c))
    return out


def shift(x: Var, c: float) -> Var:
    out = Var(x.data + c)
    TAPE.append((out, x, _pass_rule, None))
    return out


def total(x: Var) -> Var:
    out = Var(x.data.sum())
    TAPE.append((out, x, lambda g, shape: np.broadcast_to(g, shape), x.data.shape))
    return out


def gradient(root: Var, leaf: Var) -> np.ndarray:
    """d root / d leaf, running the tape backwards (every entry leads to the leaf in these chains)."""
    grads = {id(root): np.ones(())}
    for out, x, rule, saved in reversed(TAPE):
        g = grads.pop(id(out))
        grads[id(x)] = rule(g, saved)
    TAPE.clear()
    return grads[id(leaf)]


def sine_chain(x: Var, rounds: int) -> Var:
    """The tiny chain: ``rounds`` x (sin, * 1.01, + 0.1), then the sum."""
    for _ in range(rounds):
        x = shift(scale(sin(x), 1.01), 0.1)
    return total(x)


def affine_chain(x: Var, rounds: int) -> Var:
    """The deep chain: ``rounds`` x (* 0.9999, + 0.0001), then the sum."""
    for _ in range(rounds):
        x = shift(scale(x, 0.9999), 0.0001)
    return total(x)


CHAINS = {"tiny-chain": (sine_chain, 16, 100, 301), "deep-chain": (affine_chain, 4, 10_000, 20_001)}


def per_op(name: str, rounds: int = 15) -> float:
    """Microseconds per op of forward + backward of chain ``name`` on this tape (CPU time, garbage collector on)."""
    chain, n, steps, ops = CHAINS[name]
    leaf = Var(np.random.default_rng(0).standard_normal(n))
    calls = 20 if ops < 1000 else 1
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(calls):
            gradient(chain(leaf, steps), leaf)
        best = min(best, (time.process_time() - start) / calls)
    return best * 1e6 / ops


def main() -> None:
    """Print the floor of each chain."""
    for name in CHAINS:
        print(f"{name}: a minimal Python tape, forward + backward: {per_op(name):.2f} µs per op")


if __name__ == "__main__":
    main()
