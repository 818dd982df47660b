"""gradcheck's cost (issue 5): slow and fast mode on an elementwise function, beside torch's gradcheck.

Slow mode builds the whole 300x300 Jacobian numerically (600 evaluations) and analytically; fast mode
compares one random projection ``v^T J u`` each way. Every row must return True (the derivative is
right); there is no NumPy limit, so the ``funcgrad`` row is the reference. Two workloads, since a target
is about its workload's subject: slow mode against torch's, fast mode against slow mode.
Slow mode's 600 evaluations of f run without graph recording and write straight into the Jacobian, and two
batched backward passes (confirmed by random projections) stand in for the 600 single-row ones.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.frameworks import Problem
from benchmarks.harness import Target
from benchmarks.variants import Call, transform_workload


def elementwise_setup(rng: np.random.Generator, n: int) -> Problem:
    """No constants; one input of ``n`` float64."""
    return (), (rng.standard_normal(n),)


def sin_times(m: Any, x: Any) -> Any:
    """``sin(x) * x``: ``n`` outputs, each depending on one input."""
    return m.sin(x) * x


# requires_grad_() marks the input for gradcheck (a no-op after the first call)
GRADCHECK: dict[str, Call] = {
    "slow": lambda api, f, x: api.gradcheck(f, (x.requires_grad_(),)),
    "fast": lambda api, f, x: api.gradcheck(f, (x.requires_grad_(),), fast_mode=True),
}
# three-valued verdicts (issue 18): slow mode walks every element, fast mode screens with projections
VERDICT: dict[str, Call] = {
    "verdict-slow": lambda api, f, x: api.gradcheck(f, (x.requires_grad_(),), three_valued=True).status == "pass",
    "verdict-fast": lambda api, f, x: api.gradcheck(f, (x.requires_grad_(),), three_valued=True,
                                                    fast_mode=True).status == "pass",
}
SIZES, SMALL_SIZES = {"n": 300}, {"n": 6}

WORKLOADS = [
    transform_workload("gradcheck", "gradcheck of sin(x) * x, 300 -> 300 float64; funcgrad = slow mode",
                       elementwise_setup, sin_times, GRADCHECK, "slow", SIZES, SMALL_SIZES,
                       targets=(Target(("torch slow",), 1 / 3, "slow mode at most a third of torch's slow mode"),)),
    transform_workload("gradcheck-fast", "the same, funcgrad = fast mode against funcgrad's slow mode",
                       elementwise_setup, sin_times, GRADCHECK, "fast", SIZES, SMALL_SIZES, apis=("funcgrad",),
                       targets=(Target(("fg slow",), 0.1, "fast mode at least 10x faster than slow mode"),)),
    transform_workload("gradcheck-verdict", "three-valued gradcheck of the same; funcgrad = fast mode (projections "
                       "on output blocks) against slow mode (every element)", elementwise_setup, sin_times, VERDICT,
                       "verdict-fast", SIZES, SMALL_SIZES, apis=("funcgrad",),
                       targets=(Target(("fg verdict-slow",), 0.1, "fast mode at most a tenth of slow mode"),)),
]
