"""Decide ``pass``, ``fail`` or ``inconclusive`` for autograd's Jacobians against finite differences whose steps
fit the input (``steps.py``).

An element fails when ``|analytical - numerical|`` exceeds ``MARGIN`` times the estimated numerical error (plus
``eps ** (2/3)`` relative, for the backward's own rounding), so the comparison stays strict where the estimate is
good (a 1% bug next to a singularity still fails); it passes when it does not and the estimate is good enough to
say so; anything else is inconclusive, with the reason: a kink within the step (the element and the kink's
distance), or the dtype's resolution exhausted at this scale. A function whose two evaluations at one point differ
is inconclusive as a whole (non-deterministic).

Slow mode walks every input element. Fast mode probes blocks: for each block of about ``sqrt(n)`` input elements
one directional difference along random signs, compared output element by output element with autograd's, so a
bug confined to one element is diluted by its block at most, never by the whole Jacobian; blocks that do not
pass are then walked element by element.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from funcgrad.autograd import no_grad
from funcgrad.check.diagnosis import Block, diagnose
from funcgrad.check.numerical import real_shape, real_view
from funcgrad.check.steps import Estimate, Shift, derivative, finest, first_step, kink
from funcgrad.check.verdict import FAIL, INCONCLUSIVE, PASS, Element, Verdict
from funcgrad.core.tensor import Tensor

__all__ = ["MARGIN", "Problem", "judge"]

MARGIN = 4.0  # a discrepancy must exceed the estimated numerical error this many times to fail
_ROUNDING = 2 / 3  # eps ** _ROUNDING (relative) is always allowed: rounding in the backward (ill-conditioned too)
_RESOLVED = 0.4  # an estimate resolves a derivative when its error is below eps ** _RESOLVED (relative) ...
_ACCURACY = 1e-3  # ... and below this, so that a pass rules out a bug of 0.4% (MARGIN times the error)
_PROBES = 2  # dense random probes beside the block probes in fast mode


@dataclass
class Problem:
    """What is judged: ``func`` (returning the checked outputs) at ``inputs``, the inputs that require grad, their
    analytical Jacobians ``[j][pos]`` and how a report names outputs and inputs."""

    func: Callable[..., Any]
    inputs: Sequence[Any]
    indices: list[int]
    analytical: list[list[np.ndarray]]
    out_shapes: list[tuple[int, ...]]
    output_label: Callable[[int], str]
    input_label: Callable[[int], str]

    def values(self) -> np.ndarray:
        """Every checked output, flattened into one float64 vector, without graph recording."""
        with no_grad():
            result = self.func(*self.inputs)
        outs = result if isinstance(result, tuple | list) else (result,)
        arrays = [real_view(o.data).astype(np.float64) for o in outs if isinstance(o, Tensor) and o.dtype.kind in "fc"]
        return np.concatenate(arrays) if arrays else np.zeros(0)

    def eps(self) -> float:
        """The coarsest machine epsilon among the checked inputs and outputs."""
        with no_grad():
            result = self.func(*self.inputs)
        outs = result if isinstance(result, tuple | list) else (result,)
        dtypes = [o.dtype for o in outs if isinstance(o, Tensor) and o.dtype.kind == "f"]
        dtypes += [self.inputs[i].dtype for i in self.indices]
        return max(float(np.finfo(d).eps) for d in dtypes)


def _column_shift(problem: Problem, flat: np.ndarray, k: int) -> Shift:
    """Move element ``k`` of ``flat`` by ``t`` in its own dtype; the shift applied is what the dtype allowed."""
    def shifted(t: float) -> tuple[np.ndarray, float]:
        orig = flat[k].copy()
        flat[k] = orig + t
        try:
            return problem.values(), float(flat[k]) - float(orig)
        finally:
            flat[k] = orig
    return shifted


def _direction_shift(problem: Problem, x: np.ndarray, u: np.ndarray) -> Shift:
    """Move the whole input ``x`` (flat, real coordinates) by ``t * u`` (the rounding of ``x + t u`` is inside the
    estimate's noise)."""
    def shifted(t: float) -> tuple[np.ndarray, float]:
        orig = x.copy()
        x[...] = orig + t * u
        try:
            return problem.values(), t
        finally:
            x[...] = orig
    return shifted


def _coords(flat: int, shape: tuple[int, ...]) -> str:
    return str(tuple(int(c) for c in np.unravel_index(flat, shape))) if shape else "()"


class _Classifier:
    """The three-valued rule for a vector of derivatives of one shift."""

    def __init__(self, eps: float) -> None:
        self.eps = eps
        self.resolved = min(eps ** _RESOLVED, _ACCURACY)

    def split(self, ana: np.ndarray, num: np.ndarray, err: np.ndarray,
              scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(passed, failed)`` masks; the rest is inconclusive. ``scale``: see ``scale``."""
        gap = np.abs(num - ana)
        size = np.abs(num) + np.abs(ana) + scale
        with np.errstate(invalid="ignore"):
            failed = (gap > MARGIN * err + self.eps ** _ROUNDING * size) | (np.isnan(ana) & np.isfinite(num))
            passed = ~failed & (gap <= MARGIN * err + self.eps ** _ROUNDING * size) & (err <= self.resolved * size)
        return passed, failed

    def scale(self, ana: np.ndarray, typical: np.ndarray) -> np.ndarray:
        """What each element of a column is measured against beside its own values: the column's largest
        derivative, and for a derivative negligible beside ``typical`` (``|f|`` over a unit of the shift, the
        size its rounding noise scales with) that too, since no finite difference can tell it from zero."""
        negligible = np.abs(ana) <= np.sqrt(self.eps) * typical
        return float(np.max(np.abs(ana), initial=0.0)) + np.where(negligible, typical, 0.0)

    def settled(self, ana: np.ndarray, scale: np.ndarray) -> Callable[[np.ndarray, np.ndarray], bool]:
        """Whether an estimate ``(value, error)`` of a column already passes everywhere."""
        def decided(value: np.ndarray, error: np.ndarray) -> bool:
            return bool(np.all(self.split(ana, value, error, scale)[0]))
        return decided


class _Judge:
    """One three-valued run over a ``Problem``."""

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        self.rule = _Classifier(problem.eps())
        self.sizes = [math.prod(s) for s in problem.out_shapes]
        # autograd's Jacobians of every output w.r.t. each checked input, stacked: [pos] (total outputs, n)
        self.stacked = [np.concatenate([blocks[pos] for blocks in problem.analytical], axis=0)
                        if problem.analytical else np.zeros((0, real_view(problem.inputs[i].data).size))
                        for pos, i in enumerate(problem.indices)]
        self.offsets = np.cumsum([0, *self.sizes])
        self.elements: list[Element] = []
        self.checked = 0
        # numerical Jacobians as far as computed, NaN elsewhere: [pos] (total outputs, in.size)
        self.numerical = [np.full((self.offsets[-1], real_view(problem.inputs[i].data).size), np.nan)
                          for i in problem.indices]
        self.errors = [np.full_like(n, np.nan) for n in self.numerical]
        self.failed = [np.zeros(n.shape, bool) for n in self.numerical]
        self.centre = np.nan_to_num(problem.values(), nan=0.0, posinf=0.0, neginf=0.0)

    def where(self, row: int, i: int, k: int) -> str:
        j = int(np.searchsorted(self.offsets, row, side="right") - 1)
        x = self.p.inputs[i]
        return (f"{self.p.output_label(j)} {_coords(row - self.offsets[j], self.p.out_shapes[j])} w.r.t. "
                f"{self.p.input_label(i)} {_coords(k, real_shape(x))}")

    def columns(self, pos: int, ks: Sequence[int]) -> None:
        """Walk input elements ``ks`` of checked input ``pos``: an estimate per column, then the rule."""
        i = self.p.indices[pos]
        x = self.p.inputs[i]
        flat = real_view(x.data)  # complex inputs in real coordinates, perturbed one part at a time
        steps = first_step(flat)
        ana_all = self.stacked[pos]
        for k in ks:
            ana = ana_all[:, k]
            scale = self.rule.scale(ana, np.abs(self.centre) / max(abs(float(flat[k])), 1.0))

            shifted = _column_shift(self.p, flat, k)
            est = derivative(shifted, float(steps[k]), self.rule.eps, self.rule.settled(ana, scale))
            self.numerical[pos][:, k], self.errors[pos][:, k] = est.value, est.error
            self.checked += ana.size
            passed, failed = self.rule.split(ana, est.value, est.error, scale)
            if not passed.all():
                self.explain(shifted, est, ana, passed, failed, i, k, float(flat[k]))

    def explain(self, shifted: Shift, est: Estimate, ana: np.ndarray, passed: np.ndarray, failed: np.ndarray,
                i: int, k: int, x_k: float) -> None:
        """Record the elements of one column that did not pass, telling kinks and resolution from bugs."""
        found = kink(shifted, 2 * est.step, self.rule.eps)
        dtype = self.p.inputs[i].dtype
        fine, fine_noise = finest(shifted, np.asarray(x_k, dtype), self.rule.eps)
        with np.errstate(invalid="ignore"):
            unresolved = ~(np.abs(fine - est.value) <= MARGIN * (est.error + fine_noise)
                           + self.rule.eps ** _ROUNDING * np.abs(est.value))
        for row in np.nonzero(~passed)[0]:
            lo, hi = sorted((float(found.left[row]), float(found.right[row])))
            slack = MARGIN * float(est.error[row]) + self.rule.eps ** _ROUNDING * (abs(lo) + abs(hi))
            if found.jump[row] != 0 and lo - slack <= ana[row] <= hi + slack:
                status, reason = INCONCLUSIVE, (
                    f"a kink within the step: the derivative jumps by {abs(float(found.jump[row])):.3g} about "
                    f"{float(found.distance[row]):.2g} from {self.p.input_label(i)} "
                    f"{_coords(k, real_shape(self.p.inputs[i]))} = {x_k:.6g}; the analytical value lies between the "
                    f"one-sided derivatives {lo:.6g} and {hi:.6g}")
            elif failed[row] and not unresolved[row]:
                status, reason = FAIL, ("" if found.jump[row] == 0 else
                                        f"near a kink, yet outside the one-sided derivatives {lo:.6g}..{hi:.6g}")
            else:
                status, reason = INCONCLUSIVE, (
                    f"{dtype} resolution exhausted at this scale ({self.p.input_label(i)} = {x_k:.6g}, spacing "
                    f"{float(np.spacing(np.abs(np.asarray(x_k, dtype)))):.2g}): the finite differences resolve this "
                    f"derivative only to ±{max(float(est.error[row]), abs(float(fine[row] - est.value[row]))):.2g}")
            self.failed[self.p.indices.index(i)][row, k] = status == FAIL
            self.elements.append(Element(status, self.where(int(row), i, k), float(ana[row]),
                                         float(est.value[row]), float(est.error[row]), reason))

    def probes(self, pos: int, rng: np.random.Generator) -> list[int]:
        """Fast mode for checked input ``pos``: the input elements of the blocks whose probes did not pass.

        One probe per block of about ``sqrt(n)`` input elements (random signs, scaled by the elements' magnitude)
        and a few dense random ones: the directional difference ``J u`` is compared output element by output
        element with autograd's ``J u``, so a bug at one element is diluted by its block at most.
        """
        i = self.p.indices[pos]
        x = self.p.inputs[i]
        flat = real_view(x.data)
        n = flat.size
        blocks = np.array_split(np.arange(n), int(np.ceil(np.sqrt(n)))) if n else []
        weight = np.maximum(np.abs(flat.astype(np.float64)), 1.0)  # relative steps for large elements
        directions = []
        for block in blocks:
            u = np.zeros(n)
            u[block] = np.where(rng.random(block.size) < 0.5, -1.0, 1.0) * weight[block]
            directions.append((block, u))
        directions += [(np.arange(n), rng.standard_normal(n) * weight) for _ in range(_PROBES)]
        h0 = float(first_step(np.zeros(1, x.dtype))[0])
        products = self.stacked[pos] @ np.stack([u for _, u in directions], axis=1)  # autograd's J u, all probes
        flagged: set[int] = set()
        for (block, u), ana in zip(directions, products.T):
            scale = self.rule.scale(ana, np.abs(self.centre))
            settled = self.rule.settled(ana, scale)
            est = derivative(_direction_shift(self.p, flat, u), h0, self.rule.eps, settled)
            self.checked += ana.size
            if not settled(est.value, est.error) and (block.size < n or not flagged):
                flagged.update(block.tolist())  # a dense probe adds nothing to localized flags
        return sorted(flagged)

    def blocks(self) -> list[Block]:
        """The output/input blocks of the comparison, for the diagnosis."""
        found = []
        for pos, i in enumerate(self.p.indices):
            ana = self.stacked[pos]
            x = self.p.inputs[i]
            for j in range(len(self.sizes)):
                rows = slice(self.offsets[j], self.offsets[j + 1])
                others = {self.p.input_label(i2): self.numerical[p2][rows] for p2, i2 in enumerate(self.p.indices)
                          if p2 != pos and self.numerical[p2].shape == self.numerical[pos].shape}
                found.append(Block(self.p.output_label(j), self.p.input_label(i), ana[rows],
                                   self.numerical[pos][rows], self.failed[pos][rows],
                                   real_view(x.data), real_shape(x), others))
        return found

    def verdict(self, subject: str, reasons: list[str]) -> Verdict:
        statuses = {e.status for e in self.elements}
        status = FAIL if FAIL in statuses else INCONCLUSIVE if statuses or reasons else PASS
        worst = sorted(self.elements, key=lambda e: (e.status != FAIL, -abs(e.analytical - e.numerical)))
        return Verdict(status, subject, worst, list(reasons), diagnose(self.blocks()) if status == FAIL else [],
                       self.checked)


def _nondeterminism(problem: Problem) -> str | None:
    """A reason when two evaluations at the same point differ (finite differences are then noise)."""
    first, second = problem.values(), problem.values()
    if np.array_equal(first, second, equal_nan=True):
        return None
    return (f"non-deterministic: two evaluations of the function at the same input differ by up to "
            f"{float(np.nanmax(np.abs(first - second))):.3g}, so finite differences measure noise (seed it, or "
            "check a deterministic version)")


def judge(problem: Problem, subject: str, fast: bool) -> Verdict:
    """Judge every analytical Jacobian of ``problem``, with a diagnosis of the failing blocks.

    In fast mode, only the blocks whose probes do not pass are walked element by element; the report and the
    diagnosis see those elements (patterns that need a whole block, as "transposed", need every block flagged).
    """
    with np.errstate(all="ignore"):  # the ladder may step outside the function's domain: NaN is handled
        return _judged(problem, subject, fast)


def _judged(problem: Problem, subject: str, fast: bool) -> Verdict:
    reason = _nondeterminism(problem)
    run = _Judge(problem)
    if reason is not None:
        return run.verdict(subject, [reason])
    rng = np.random.default_rng(0)
    for pos, x in enumerate(problem.indices):
        n = real_view(problem.inputs[x].data).size
        run.columns(pos, run.probes(pos, rng) if fast else range(n))
    return run.verdict(subject, [])
