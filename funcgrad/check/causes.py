"""Likely causes of a Jacobian mismatch in PyTorch-mode ``gradcheck``, in words, for its report: a kink within the
step, an output computed outside autograd, a wrong sign or factor, a backward that ignores grad_output, a backward
or a function that is not deterministic, inputs modified in place, a low-precision input. It explains a mismatch
already found; deciding is ``gradcheck``'s job.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from funcgrad.check.arguments import tensor_outputs
from funcgrad.check.diagnosis import Block, conjugated
from funcgrad.check.numerical import Step, auto_step, derivative_jumps, evaluate, real_shape, real_view

__all__ = ["KINK_COLUMNS", "Suspects"]

KINK_COLUMNS = 10  # violating input elements probed for a kink


@dataclass(frozen=True)
class Suspects:
    """Where mismatches are explained: ``func`` at ``inputs``, copies of the checked inputs taken before the run
    (``snapshot``, by position in ``inputs``), and the run's step, tolerances and names."""

    func: Callable[..., Any]
    inputs: Sequence[Any]
    snapshot: dict[int, np.ndarray]
    eps: Step
    atol: float
    nondet_tol: float
    output_label: Callable[[int], str]
    input_label: Callable[[int], str]

    def causes(self, i: int, j: int, numerical: np.ndarray, analytical: np.ndarray, second: np.ndarray,
               jumps: list[str]) -> list[str]:
        """Likely causes of a mismatch of output ``j`` w.r.t. input ``i`` (``second``: the analytical Jacobian of a
        second backward run; ``jumps``: from ``kinks``), most likely first."""
        causes = list(jumps)
        outputs = tensor_outputs(self.func, self.inputs)
        if j < len(outputs) and not outputs[j].requires_grad:
            causes.append(f"{self.output_label(j)} does not require grad: it was computed outside autograd "
                          "(a once_differentiable or NumPy backward, no_grad, or mark_non_differentiable)")
        nz = np.abs(numerical) > 1e-6 * np.abs(numerical).max(initial=0)
        if nz.any():
            ratio = analytical[nz] / numerical[nz]
            if np.ptp(ratio) < 1e-3 * max(1.0, np.abs(ratio).max()) and abs(ratio[0] - 1) > 1e-3:
                causes.append("wrong sign: analytical = -numerical" if abs(ratio[0] + 1) < 1e-3 else
                              f"a missing or extra factor: analytical = {ratio[0]:.6g} x numerical")
        x = self.inputs[i]
        if j < len(outputs) and "c" in x.dtype.kind + outputs[j].dtype.kind:
            conj = conjugated(Block(self.output_label(j), self.input_label(i), analytical, numerical,
                                    np.zeros(numerical.shape, bool), real_view(x.data), real_shape(x), {},
                                    x.dtype.kind == "c", outputs[j].dtype.kind == "c"))
            causes += [conj] if conj else []
        if analytical.shape[0] > 1 and np.abs(analytical).max(initial=0) > 0 and np.allclose(
                analytical, analytical[:1]) and not np.allclose(numerical, numerical[:1]):
            causes.append("every row of the analytical Jacobian is the same: the backward ignores grad_output")
        if not np.allclose(analytical, second, rtol=0, atol=self.nondet_tol):
            causes.append("the backward is not deterministic: two runs differ by up to "
                          f"{np.abs(analytical - second).max():.3g}")
        if any(not np.array_equal(a, b, equal_nan=True) for a, b in zip(evaluate(self.func, self.inputs),
                                                                        evaluate(self.func, self.inputs))):
            causes.append("func is not deterministic: two evaluations at the same point differ, so the finite "
                          "differences are noise")
        if any(not np.array_equal(self.inputs[k].data, s) for k, s in self.snapshot.items()):
            causes.append("func modifies its inputs in place (an in-place forward without mark_dirty?), so the "
                          "finite differences are taken around moving inputs")
        if x.dtype not in (np.float64, np.complex128) and self.eps != "auto":
            causes.append(f"{self.input_label(i)} is {x.dtype}: finite differences lose most of its digits "
                          "(use float64 inputs or eps='auto')")
        return causes

    def kinks(self, i: int, j: int, bad_columns: np.ndarray) -> list[str]:
        """Describe the violating input elements (the first ``KINK_COLUMNS`` of ``bad_columns``) whose
        finite-difference stencil straddles a kink of output ``j``."""
        x = self.inputs[i]
        flat = real_view(x.data)
        steps = auto_step(flat) if self.eps == "auto" else None
        found = []
        for k in bad_columns[:KINK_COLUMNS]:
            h = float(steps[k]) if steps is not None else float(self.eps)
            jump = derivative_jumps(self.func, self.inputs, i, int(k), h)[j]
            if np.abs(jump).max(initial=0) > self.atol:
                coords = tuple(int(c) for c in np.unravel_index(k, real_shape(x)))
                found.append(f"{self.input_label(i)} at {coords} = {flat[k]:.6g} is within "
                             f"{h:.3g} of a kink: the derivative jumps by {np.abs(jump).max():.3g} there")
        return found
