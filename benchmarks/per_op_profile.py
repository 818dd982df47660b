"""Where the microseconds of one recorded op go: the tiny-chain (or deep-chain) workload split into categories
by timing its pieces separately.

    python -m benchmarks.per_op_profile [--workload tiny-chain|deep-chain]

Rows, each per op (ops as the workload counts them):
  forward kernels (NumPy)        the forward arithmetic on raw arrays, nothing else
  call path and wrapping         funcgrad's op functions under no_grad, minus the kernels
  recording                      grad mode on, minus no_grad: node, edges, metadata, saved values, result Tensor
  rule arithmetic (NumPy)        the backward formulas on raw arrays (what a hand-written backward computes)
  engine and rule dispatch       funcgrad's backward pass minus that arithmetic: the engine's walk, Node.apply,
                                 saved-value checks, the rules' Python frames
The next row times the same chain on the smallest tape Python allows (``benchmarks/python_floor.py``); the last
gives the memory the recorded graph holds per op (``tracemalloc``: nodes, edges, saved values, result Tensors and
their arrays), which issue 19 wants at most 500 bytes for the deep chain.
Times are CPU times of this process (robust to other load), minima over rounds, with the garbage collector
on, as in a user's loop.
"""
from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad as fg
from benchmarks import python_floor
from benchmarks.workloads import affine_chain, sine_chain


def _best(fn: Callable[[], Any], rounds: int = 15, calls: int = 20) -> float:
    """Seconds per call of ``fn``: the minimum over ``rounds`` of the mean over ``calls``."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - start) / calls)
    return best


def _sine_pieces(rounds: int, x: np.ndarray) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The tiny chain's forward on arrays, and its backward formulas on arrays (given the forward's inputs)."""
    inputs = []
    y = x
    for _ in range(rounds):
        inputs.append(y)
        y = np.sin(y) * 1.01 + 0.1

    def forward() -> Any:
        y = x
        for _ in range(rounds):
            y = np.sin(y) * 1.01 + 0.1
        return y.sum()

    def backward() -> Any:
        g = np.ones_like(x)
        for y in reversed(inputs):
            g = g * 1.01  # mul's rule (add's passes g on)
            g = g * np.cos(y)  # sin's rule
        return g

    return forward, backward


def _affine_pieces(rounds: int, x: np.ndarray) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The deep chain's forward on arrays, and its backward formulas on arrays."""
    def forward() -> Any:
        y = x
        for _ in range(rounds):
            y = y * 0.9999 + 0.0001
        return y.sum()

    def backward() -> Any:
        g = np.ones_like(x)
        for _ in range(rounds):
            g = g * 0.9999
        return g

    return forward, backward


WORKLOADS = {  # name: (chain, array pieces, size, rounds, ops)
    "tiny-chain": (sine_chain, _sine_pieces, 16, 100, 301),
    "deep-chain": (affine_chain, _affine_pieces, 4, 10_000, 20_001),
}


def profile(name: str) -> list[tuple[str, float]]:
    """The per-op categories of workload ``name``, in microseconds."""
    chain, pieces, n, rounds, ops = WORKLOADS[name]
    data = np.random.default_rng(0).standard_normal(n)
    x = fg.tensor(data, requires_grad=True)
    array_forward, array_backward = pieces(rounds, data)

    def no_grad_forward() -> Any:
        with fg.no_grad():
            return chain(fg, rounds, x)

    def recorded_forward() -> Any:
        return chain(fg, rounds, x)

    def forward_backward() -> None:
        chain(fg, rounds, x).backward()
        x.grad = None

    calls = 20 if ops < 1000 else 1
    kernels = _best(array_forward, calls=calls)
    plain = _best(no_grad_forward, calls=calls)
    recorded = _best(recorded_forward, calls=calls)
    total = _best(forward_backward, calls=calls)
    rules = _best(array_backward, calls=calls)
    per_op = 1e6 / ops
    rows = [("forward kernels (NumPy)", kernels), ("call path and wrapping", plain - kernels),
            ("recording", recorded - plain), ("rule arithmetic (NumPy)", rules),
            ("engine and rule dispatch", total - recorded - rules)]
    return [(label, seconds * per_op) for label, seconds in rows] + [("total", total * per_op)]


def graph_bytes_per_op(name: str) -> float:
    """The memory the recorded graph of workload ``name`` holds, in bytes per op (while its output is alive)."""
    chain, _, n, rounds, ops = WORKLOADS[name]
    x = fg.tensor(np.random.default_rng(0).standard_normal(n), requires_grad=True)
    chain(fg, 2, x)  # (first calls: caches and interned shapes are not the graph's)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        out = chain(fg, rounds, x)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    del out
    return held / ops


def main() -> None:
    """Print the per-op profile of the chosen workload."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="tiny-chain")
    name = parser.parse_args().workload
    print(f"{name}: µs per op, by category (garbage collector on)")
    for label, micros in profile(name):
        print(f"  {label:28s} {micros:6.2f}")
    print(f"  {'a minimal Python tape':28s} {python_floor.per_op(name):6.2f}   (benchmarks/python_floor.py: kernels "
          "and the least a tape can do, for scale)")
    print(f"  {'recorded graph':28s} {graph_bytes_per_op(name):6.0f}   bytes per op (tracemalloc)")


if __name__ == "__main__":
    main()
