"""Peak memory of a chunked dense Hessian (issue 17): ``func.hessian(f, max_memory=...)`` at n = 4,096.

Run ``python -m benchmarks.peak_memory [n] [budget_mb] [--compare]``. The Hessian itself (n x n float64, 134 MB at
n = 4,096) is the result, not working memory: what is measured is the traced peak (``tracemalloc``: Python
objects and NumPy buffers) above the result's size, against the budget given to ``max_memory``; the same
for one unchunked pass, for comparison.
"""
from __future__ import annotations

import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad as fg
import funcgrad.func as ff


def energy_of_size(n: int) -> Callable[[Any], Any]:
    """A scalar with a dense Hessian: ``sum(tanh(A @ u)) + |u|**4 / 4`` with a dense constant ``A`` (64 x n)."""
    A = fg.tensor(np.random.default_rng(0).standard_normal((64, n)) / np.sqrt(n))

    def energy(u: Any) -> Any:
        return fg.sum(fg.tanh(A @ u)) + 0.25 * fg.sum(u * u) ** 2

    return energy


def peak(energy: Callable[[Any], Any], n: int, max_memory: float | None) -> tuple[float, float]:
    """``(working peak in bytes above the result, seconds)`` for one Hessian."""
    x = np.random.default_rng(1).uniform(-1, 1, n)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        H = ff.hessian(energy, max_memory=max_memory)(x) if max_memory else ff.hessian(energy)(x)
        seconds = time.perf_counter() - start
        return tracemalloc.get_traced_memory()[1] - base - H.nbytes, seconds
    finally:
        tracemalloc.stop()


def main(n: int = 4096, budget_mb: float = 64.0, compare: bool = False) -> None:
    """Print the chunked (and with ``compare``, the unchunked) peak beside the budget."""
    energy = energy_of_size(n)
    budget = budget_mb * 2 ** 20
    chunked, chunked_s = peak(energy, n, budget)
    print(f"n = {n}: Hessian {n * n * 8 / 2 ** 20:.0f} MB (the result, not counted)")
    print(f"  max_memory = {budget_mb:g} MB: working peak {chunked / 2 ** 20:7.1f} MB = {chunked / budget:.2f}x the "
          f"budget, {chunked_s:.1f} s  -> {'PASS' if chunked < 2 * budget else 'MISS'} (target < 2x)")
    if compare:
        whole, whole_s = peak(energy, n, None)
        print(f"  one pass (no max_memory): working peak {whole / 2 ** 20:7.1f} MB, {whole_s:.1f} s")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(args[0]) if args else 4096, float(args[1]) if len(args) > 1 else 64.0, "--compare" in sys.argv)
