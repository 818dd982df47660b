"""Decide ``pass``, ``fail`` or ``inconclusive`` for autograd's Jacobians against finite differences whose steps
fit the input (``steps.py``).

An element fails when ``|analytical - numerical|`` exceeds ``MARGIN`` times the estimated numerical error (plus
``eps ** (2/3)`` relative, and ``4 eps`` of the largest derivative for an analytical value that small where the
finite differences see no dependence, for the backward's own rounding), so the comparison stays strict where the
estimate is good (a 1% bug next to a singularity still fails); it passes when it does not and the estimate is good
enough to say so; anything else is inconclusive, with the reason: a kink within the step (the element and the kink's
distance), a failure that a ladder of smaller steps does not confirm (the function jumps within the top steps), or
the dtype's resolution exhausted at this scale. A function whose two evaluations at one point differ is inconclusive
as a whole (non-deterministic).

Slow mode walks every input element. Fast mode first screens each input with projections ``v^T J u``: two
directional differences ``J u`` (random signs) projected on covectors ``v``, random signs on one block of about
``sqrt(m)`` outputs each, weighted by each output's tolerance, against ``v^T J`` from one batched backward pass; a
bug at one element then shows as if that output were compared alone. No full Jacobian is built when the screen
passes. Otherwise the outputs of the failing projections are compared one by one (their rows of autograd's
Jacobian), and the input elements they involve, with those of the blocks whose probes (per block of about
``sqrt(n)`` input elements, output element by output element) do not pass, are walked element by element, which
names and diagnoses them.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from funcgrad.autograd import no_grad
from funcgrad.check.diagnosis import Block, diagnose
from funcgrad.check.numerical import COMPLEX_COORDINATES, Cells, perturbable, real_shape, real_view
from funcgrad.check.steps import Estimate, derivative, finest, first_step, kink, slopes
from funcgrad.check.verdict import FAIL, INCONCLUSIVE, PASS, Element, Verdict
from funcgrad.core.tensor import Tensor

__all__ = ["MARGIN", "Problem", "judge"]

MARGIN = 4.0  # a discrepancy must exceed the estimated numerical error this many times to fail
_ROUNDING = 2 / 3  # eps ** _ROUNDING (relative) is always allowed: rounding in the backward (ill-conditioned too)
_RESOLVED = 0.4  # an estimate resolves a derivative when its error is below eps ** _RESOLVED (relative) ...
_ACCURACY = 1e-3  # ... and below this, so that a pass rules out a bug of 0.4% (MARGIN times the error)
_TINY = float(np.finfo(np.float64).tiny)  # a gap below the smallest normal float is below any difference's resolution
_FLOOR = 4  # eps times the largest derivative, this many times over, may be the backward's rounding of a zero
_PROBES = 2  # dense random probes beside the block probes in fast mode
_SCREENS = 2  # random directions of fast mode's screen
_RECHECK = 64  # a failing estimate is confirmed by a second ladder from a step this many times smaller


@dataclass
class Problem:
    """What is judged: ``func`` (returning the checked outputs) at ``inputs``, the inputs that require grad, autograd's
    side and how a report names outputs and inputs.

    Autograd's side comes on demand, each checked for reentrancy (a ``GradcheckError`` otherwise): ``jacobians()``
    gives the Jacobians ``[j][pos]``, ``projections(v)`` the products ``v @ J`` [pos] (k, in size) for covectors
    ``v`` (k, the real sizes of all outputs, concatenated). ``complex_outputs``: which outputs are complex.
    ``precise``: the same problem at float64 (complex128) copies of the inputs, when they have a lower precision:
    how far the outputs and Jacobians are from its measures the rounding they realize, cancellation included."""

    func: Callable[..., Any]
    inputs: Sequence[Any]
    indices: list[int]
    jacobians: Callable[[], list[list[np.ndarray]]]
    projections: Callable[[np.ndarray], list[np.ndarray]]
    out_shapes: list[tuple[int, ...]]
    output_label: Callable[[int], str]
    input_label: Callable[[int], str]
    complex_outputs: Sequence[bool] = ()
    precise: Problem | None = None

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

    def twin(self) -> Problem:
        """The ``precise`` twin, its checked inputs set to this problem's as they are now (shifted or not)."""
        twin = self.precise
        assert twin is not None
        for i in self.indices:
            twin.inputs[i].data[...] = self.inputs[i].data
        return twin

    def rounding(self, values: np.ndarray) -> np.ndarray:
        """How far ``values``, the outputs at the inputs as they are now, are from the ``precise`` twin's at the same
        point: the rounding they realize (zero where either is NaN, or everywhere if the twin fails here)."""
        try:
            precise = self.twin().values()
        except Exception:  # (the twin measures only: its failure is no verdict)
            return np.zeros(values.shape)
        with np.errstate(invalid="ignore"):
            return np.nan_to_num(np.abs(values - precise), nan=0.0)


class _Shifted:
    """A ``Shift`` of the problem's input, moved in place by ``move(t)`` (which returns the shift the dtype allowed)
    and put back by ``restore()``; each point is evaluated once. Where the problem has a ``precise`` twin, ``rounding``
    is how far the outputs are from the twin's at the same point: the rounding the computation realizes there."""

    def __init__(self, problem: Problem, move: Callable[[float], float], restore: Callable[[], None]) -> None:
        self.problem, self.move, self.restore = problem, move, restore
        self.seen: dict[float, tuple[np.ndarray, float, np.ndarray | None]] = {}

    def __call__(self, t: float) -> tuple[np.ndarray, float]:
        return self.evaluated(t)[:2]

    def rounding(self, t: float) -> np.ndarray:
        """The outputs' realized absolute rounding at shift ``t`` (zeros without a twin)."""
        values, _, realized = self.evaluated(t)
        return np.zeros(values.shape) if realized is None else realized

    def evaluated(self, t: float) -> tuple[np.ndarray, float, np.ndarray | None]:
        if t not in self.seen:
            applied = self.move(t)
            try:
                values = self.problem.values()
                self.seen[t] = values, applied, self.problem.rounding(values) if self.problem.precise else None
            finally:
                self.restore()
        return self.seen[t]


def _column_shift(problem: Problem, flat: np.ndarray | Cells, k: int) -> _Shifted:
    """Move element ``k`` of ``flat`` by ``t`` in its own dtype; the shift applied is what the dtype allowed."""
    orig = flat[k].copy()

    def move(t: float) -> float:
        flat[k] = orig + t
        return float(flat[k]) - float(orig)

    def restore() -> None:
        flat[k] = orig
    return _Shifted(problem, move, restore)


def _direction_shift(problem: Problem, x: np.ndarray | Cells, u: np.ndarray) -> _Shifted:
    """Move the whole input ``x`` (flat, real coordinates) by ``t * u`` (the rounding of ``x + t u`` is inside the
    estimate's noise)."""
    orig = x.copy()

    def move(t: float) -> float:
        x[...] = orig + t * u
        return t

    def restore() -> None:
        x[...] = orig
    return _Shifted(problem, move, restore)


def _converged() -> Callable[[np.ndarray, np.ndarray], bool]:
    """A stop for ``derivative``'s ladder: True once the total error of the finite elements no longer halves."""
    last = [np.inf]

    def converged(value: np.ndarray, error: np.ndarray) -> bool:
        now = float(np.sum(error, where=np.isfinite(error)))
        done, last[0] = now > last[0] / 2, now
        return done
    return converged


def _coords(flat: int, shape: tuple[int, ...]) -> str:
    return str(tuple(int(c) for c in np.unravel_index(flat, shape))) if shape else "()"


class _Classifier:
    """The three-valued rule for a vector of derivatives of one shift."""

    def __init__(self, eps: float) -> None:
        self.eps = eps
        self.resolved = min(eps ** _RESOLVED, _ACCURACY)
        self.floor = 0.0  # the absolute rounding of the backward, set once its Jacobians are known

    def split(self, ana: np.ndarray, num: np.ndarray, err: np.ndarray, scale: np.ndarray,
              rounded: Any = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """``(passed, failed)`` masks; the rest is inconclusive. ``scale``: see ``scale``. ``rounded``: the rounding
        the analytical values realize (measured against a precise twin): a gap within it fails no element, and
        passes none either."""
        gap = np.abs(num - ana)
        size = np.abs(num) + np.abs(ana) + scale
        with np.errstate(invalid="ignore"):
            zero = (np.abs(ana) <= self.floor) & (np.abs(num) <= MARGIN * err)  # no dependence seen, rounding left
            rounding = np.where(zero, self.floor, 0.0)
            allowed = MARGIN * err + self.eps ** _ROUNDING * size + rounding + _TINY  # (relative parts underflow)
            failed = (gap > allowed + MARGIN * rounded) | (np.isnan(ana) & np.isfinite(num))
            # resolved beside the element's own size, not the sum above (~3 times it), which let 1.2% bugs pass
            own = np.maximum(np.maximum(np.abs(num), np.abs(ana)), scale)
            passed = ~failed & (gap <= allowed) & (err <= self.resolved * own)
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

    def tolerance(self, est: Estimate, centre: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(tolerance, scale)`` per output of a directional difference ``J u``: what ``split`` would allow each
        output's gap, and what each is measured against (``|f|``, ``centre``, where ``J u`` is negligible)."""
        scale = np.abs(est.value)
        scale = np.where(scale <= np.sqrt(self.eps) * centre, centre, scale)
        return MARGIN * est.error + self.eps ** _ROUNDING * 2 * scale + _TINY, scale

    def projected(self, ana: np.ndarray, covectors: np.ndarray, est: Estimate,
                  centre: np.ndarray) -> tuple[np.ndarray, bool]:
        """How a directional difference ``J u`` (``est``, per output) compares, projected on ``covectors`` (k, m),
        with autograd's ``v^T J u`` (``ana``); ``centre``: ``|f|`` at the point.

        Returns which projections fail, stricter than ``split``: beyond the tolerance of one output (the largest;
        with covectors weighted by ``1 / tolerance`` a bug at one output shows as if compared alone), and whether
        every output's error resolves the largest ``(J u)_r`` of its covector.
        """
        magnitude = np.abs(covectors)
        tolerance, scale = self.tolerance(est, centre)
        peak = np.max(np.where(magnitude > 0, scale, 0.0), axis=1, initial=0.0)
        resolved = bool(np.all((magnitude == 0) | (est.error <= self.resolved * peak[:, None])))
        gap = np.abs(covectors @ est.value - ana)
        return ~(gap <= np.max(magnitude * tolerance, axis=1, initial=0.0)), resolved


class _Judge:
    """One three-valued run over a ``Problem``."""

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        self.rule = _Classifier(problem.eps())
        self.sizes = [math.prod(s) for s in problem.out_shapes]
        self.offsets = np.cumsum([0, *self.sizes])
        self.elements: list[Element] = []
        self.checked = 0
        self.centre = np.nan_to_num(problem.values(), nan=0.0, posinf=0.0, neginf=0.0)

    @cached_property
    def stacked(self) -> list[np.ndarray]:
        """Autograd's Jacobians of every output w.r.t. each checked input, stacked: [pos] (total outputs, n)."""
        analytical = self.p.jacobians()
        stacked = [np.concatenate([blocks[pos] for blocks in analytical], axis=0) if analytical else
                   np.zeros((0, real_view(self.p.inputs[i].data).size)) for pos, i in enumerate(self.p.indices)]
        # a derivative that vanishes beside others of size 1 comes out of the backward as rounding, 1e-17 (each element
        # sums terms as large as the others): where the finite differences see no dependence, that is no failure
        largest = max((float(np.max(np.abs(s), initial=0.0, where=np.isfinite(s))) for s in stacked), default=0.0)
        self.rule.floor = _FLOOR * self.rule.eps * largest
        return stacked

    @cached_property
    def rounded(self) -> list[np.ndarray] | list[float]:
        """How far ``stacked`` is from the precise twin's Jacobians: the rounding autograd's side realizes [pos] (zero
        without a twin, and where either side is NaN)."""
        if self.p.precise is None:
            return [0.0] * len(self.p.indices)
        try:
            twin = self.p.twin().jacobians()
        except Exception:  # (the twin measures only: its failure is no verdict)
            return [0.0] * len(self.p.indices)
        precise = [np.concatenate([blocks[pos] for blocks in twin], axis=0) if twin else np.zeros_like(s)
                   for pos, s in enumerate(self.stacked)]
        return [np.nan_to_num(np.abs(s - t), nan=0.0) for s, t in zip(self.stacked, precise)]

    @cached_property
    def numerical(self) -> list[np.ndarray]:
        """The numerical Jacobians as far as computed, NaN elsewhere: [pos] (total outputs, in.size)."""
        return [np.full((self.offsets[-1], real_view(self.p.inputs[i].data).size), np.nan) for i in self.p.indices]

    @cached_property
    def errors(self) -> list[np.ndarray]:
        """The estimated errors of ``numerical``."""
        return [np.full_like(n, np.nan) for n in self.numerical]

    @cached_property
    def failed(self) -> list[np.ndarray]:
        """The elements that failed: [pos] (total outputs, in.size)."""
        return [np.zeros(n.shape, bool) for n in self.numerical]

    def where(self, row: int, i: int, k: int) -> str:
        j = int(np.searchsorted(self.offsets, row, side="right") - 1)
        x = self.p.inputs[i]
        return (f"{self.p.output_label(j)} {_coords(row - self.offsets[j], self.p.out_shapes[j])} w.r.t. "
                f"{self.p.input_label(i)} {_coords(k, real_shape(x))}")

    def columns(self, pos: int, ks: Sequence[int]) -> None:
        """Walk input elements ``ks`` of checked input ``pos``: an estimate per column, then the rule."""
        i = self.p.indices[pos]
        x = self.p.inputs[i]
        flat = perturbable(x.data)  # complex inputs in real coordinates, perturbed one part at a time
        steps = first_step(np.asarray(flat))
        ana_all = self.stacked[pos]
        rounded = self.rounded[pos]
        for k in ks:
            ana = ana_all[:, k]
            rounded_k = rounded if isinstance(rounded, float) else rounded[:, k]
            scale = self.rule.scale(ana, np.abs(self.centre) / max(abs(float(flat[k])), 1.0))

            shifted = _column_shift(self.p, flat, k)
            est = self.estimate(shifted, float(steps[k]), self.rule.settled(ana, scale))
            self.numerical[pos][:, k], self.errors[pos][:, k] = est.value, est.error
            self.checked += ana.size
            passed, failed = self.rule.split(ana, est.value, est.error, scale, rounded_k)
            if not passed.all():
                self.explain(shifted, est, ana, scale, passed, failed, i, k, float(flat[k]), float(steps[k]), rounded_k)

    def estimate(self, shifted: _Shifted, h0: float, decided: Callable[[np.ndarray, np.ndarray], bool]) -> Estimate:
        """The derivative along ``shifted`` from step ``h0`` down, its noise counting the rounding the outputs realize
        where the problem has a precise twin."""
        return derivative(shifted, h0, self.rule.eps, decided, shifted.rounding if self.p.precise else None)

    def rechecked(self, shifted: _Shifted, est: Estimate, h0: float, rows: np.ndarray) -> tuple[Estimate, np.ndarray]:
        """A second estimate from a ladder starting at ``h0 / _RECHECK``, and where it contradicts ``est`` (``rows``
        only): Ridders' error is the gap between neighbouring steps, so a function that jumps or turns within the
        top steps (a sign flip of an SVD's vectors 2e-3 away, with float32's top step 0.04) can agree with itself
        there and be wrong; a smaller ladder then sees the local derivative."""
        def contradicts(value: np.ndarray, error: np.ndarray) -> np.ndarray:
            bound = MARGIN * (error + est.error) + self.rule.eps ** _ROUNDING * np.abs(est.value)
            return rows & (np.abs(value - est.value) > bound)  # (NaN: no evidence either way)

        again = self.estimate(shifted, h0 / _RECHECK, lambda v, e: not contradicts(v, e).any())
        return again, contradicts(again.value, again.error)

    def explain(self, shifted: _Shifted, est: Estimate, ana: np.ndarray, scale: np.ndarray, passed: np.ndarray,
                failed: np.ndarray, i: int, k: int, x_k: float, h0: float, rounded: Any) -> None:
        """Record the elements of one column that did not pass, telling kinks, steps that are too large, rounding and
        resolution from bugs."""
        found = kink(shifted, 2 * est.step, self.rule.eps)
        again, contradicted = self.rechecked(shifted, est, h0, failed) if failed.any() else (est, failed)
        # a jump within the top steps of this shift, seen on any output: only the smaller steps count
        unconfirmed = contradicted | (contradicted.any()
                                      & ~self.rule.split(ana, again.value, again.error, scale, rounded)[1])
        within_rounding = ~failed & self.rule.split(ana, est.value, est.error, scale)[1]
        dtype = self.p.inputs[i].dtype
        fine, fine_noise = finest(shifted, np.asarray(x_k, dtype), self.rule.eps)
        with np.errstate(invalid="ignore"):
            unresolved = ~(np.abs(fine - est.value) <= MARGIN * (est.error + fine_noise)
                           + self.rule.eps ** _ROUNDING * np.abs(est.value))
            # within tolerance and resolved beside how fast the function moves near the point: a pass after all
            local = est.error <= self.rule.resolved * slopes(shifted, h0)
            resolved_locally = ~failed & ~unresolved & (found.jump == 0) & local
        for row in np.nonzero(~passed & ~resolved_locally)[0]:
            lo, hi = sorted((float(found.left[row]), float(found.right[row])))
            slack = MARGIN * float(est.error[row]) + self.rule.eps ** _ROUNDING * (abs(lo) + abs(hi))
            if not np.isfinite(x_k):
                status, reason = INCONCLUSIVE, (
                    f"{self.p.input_label(i)} {_coords(k, real_shape(self.p.inputs[i]))} = {x_k}: no finite "
                    "difference moves a non-finite input")
            elif found.jump[row] != 0 and lo - slack <= ana[row] <= hi + slack:
                status, reason = INCONCLUSIVE, (
                    f"a kink within the step: the derivative jumps by {abs(float(found.jump[row])):.3g} about "
                    f"{float(found.distance[row]):.2g} from {self.p.input_label(i)} "
                    f"{_coords(k, real_shape(self.p.inputs[i]))} = {x_k:.6g}; the analytical value lies between the "
                    f"one-sided derivatives {lo:.6g} and {hi:.6g}")
            elif failed[row] and unconfirmed[row]:
                status, reason = INCONCLUSIVE, (
                    f"the finite differences from steps of {h0:.2g} down ({float(est.value[row]):.6g}) are not "
                    f"confirmed from {h0 / _RECHECK:.2g} down ({float(again.value[row]):.6g} ± "
                    f"{float(again.error[row]):.2g}): the function jumps or turns sharply within {h0:.2g} of "
                    f"{self.p.input_label(i)} {_coords(k, real_shape(self.p.inputs[i]))} = {x_k:.6g}")
            elif failed[row] and not unresolved[row]:
                status, reason = FAIL, ("" if found.jump[row] == 0 else
                                        f"near a kink, yet outside the one-sided derivatives {lo:.6g}..{hi:.6g}")
            elif within_rounding[row]:
                status, reason = INCONCLUSIVE, (
                    f"{dtype} rounding: the gap {abs(float(ana[row] - est.value[row])):.2g} is within what autograd's "
                    f"{dtype} computation realizes here ({float(np.broadcast_to(rounded, ana.shape)[row]):.2g}, "
                    "measured against the same computation at float64 copies of the inputs): check in float64")
            elif not np.isfinite(est.value[row]):
                status, reason = INCONCLUSIVE, (
                    f"this output is NaN or infinite about {self.p.input_label(i)} "
                    f"{_coords(k, real_shape(self.p.inputs[i]))} = {x_k:.6g} (outside the function's domain?)")
            else:
                status, reason = INCONCLUSIVE, (
                    f"{dtype} resolution exhausted at this scale ({self.p.input_label(i)} = {x_k:.6g}, spacing "
                    f"{float(np.spacing(np.abs(np.asarray(x_k, dtype)))):.2g}): the finite differences resolve this "
                    f"derivative only to ±{max(float(est.error[row]), abs(float(fine[row] - est.value[row]))):.2g}")
            self.failed[self.p.indices.index(i)][row, k] = status == FAIL
            self.elements.append(Element(status, self.where(int(row), i, k), float(ana[row]),
                                         float(est.value[row]), float(est.error[row]), reason))

    def covectors(self, rng: np.random.Generator) -> np.ndarray:
        """Fast mode's covectors before weighting: random signs on each block of about ``sqrt(m)`` outputs, zero
        elsewhere (rows; columns are the real sizes of all outputs, concatenated)."""
        m = int(self.offsets[-1])
        blocks = np.array_split(np.arange(m), int(np.ceil(np.sqrt(m)))) if m else []
        covectors = np.zeros((len(blocks), m))
        for b, rows in enumerate(blocks):
            covectors[b, rows] = np.where(rng.random(rows.size) < 0.5, -1.0, 1.0)
        return covectors

    def screened(self, pos: int, signs: np.ndarray, rng: np.random.Generator) -> tuple[str, list[int]]:
        """Fast mode's screen of checked input ``pos``: how ``v^T J u`` compares for ``_SCREENS`` random directions
        ``u`` (signs, scaled by the elements' magnitude) and covectors ``v``: ``signs`` weighted per output by
        ``1 / tolerance`` of that direction's difference, so that a small, precise output is not drowned by a
        large, noisy one. Each difference runs its ladder until the error stops halving, since a pass is only as
        sensitive as the final error; see ``_Classifier.projected``. The outputs of a failing projection are
        then compared one by one, as its gap may be their errors summed: ``fail`` only if one of them fails, with
        the input elements on which autograd says the failing ones depend."""
        i = self.p.indices[pos]
        flat = perturbable(self.p.inputs[i].data)
        if not flat.size or not signs.size:
            return PASS, []
        weight = np.maximum(np.abs(flat.astype(np.float64)), 1.0)  # relative steps for large elements
        h0 = float(first_step(np.zeros(1, flat.dtype))[0])
        centre = np.abs(self.centre)
        directions = [np.where(rng.random(flat.size) < 0.5, -1.0, 1.0) * weight for _ in range(_SCREENS)]
        estimates = [self.estimate(_direction_shift(self.p, flat, u), h0, _converged()) for u in directions]
        if not all(np.all(np.isfinite(est.error)) for est in estimates):
            return INCONCLUSIVE, []
        weights = [1 / (self.rule.tolerance(est, centre)[0] + 1e-300) for est in estimates]
        covectors = [signs * w / np.max(np.abs(signs) * w, axis=1, keepdims=True) for w in weights]
        rows = self.p.projections(np.concatenate(covectors))[pos]
        status, suspects = PASS, np.zeros(signs.shape[1], bool)
        for k, (u, est, v) in enumerate(zip(directions, estimates, covectors)):
            failed, resolved = self.rule.projected(rows[k * len(v):(k + 1) * len(v)] @ u, v, est, centre)
            suspects |= np.any(v[failed] != 0, axis=0)
            status = status if resolved else INCONCLUSIVE
            self.checked += len(v)
        columns = self.failing_outputs(pos, suspects, directions, estimates) if suspects.any() else None
        return (FAIL, columns) if columns is not None else (status, [])

    def failing_outputs(self, pos: int, suspects: np.ndarray, directions: list[np.ndarray],
                        estimates: list[Estimate]) -> list[int] | None:
        """Compare autograd's ``(J u)_r`` for the ``suspects`` outputs ``r`` (their rows of the Jacobian, one
        backward pass) with the differences ``estimates`` along ``directions``; the input elements on which the
        rows that fail depend, by autograd (None if none fails)."""
        chosen = np.nonzero(suspects)[0]
        seeds = np.zeros((chosen.size, suspects.size))
        seeds[np.arange(chosen.size), chosen] = 1.0
        exact = self.p.projections(seeds)[pos]
        self.checked += chosen.size * len(directions)
        failed = np.zeros(chosen.size, bool)
        for u, est in zip(directions, estimates):
            tolerance = self.rule.tolerance(est, np.abs(self.centre))[0][chosen]
            failed |= ~(np.abs(exact @ u - est.value[chosen]) <= tolerance)
        return np.nonzero(np.any(exact[failed] != 0, axis=0))[0].tolist() if failed.any() else None

    def probes(self, pos: int, rng: np.random.Generator) -> list[int]:
        """Fast mode for checked input ``pos``: the input elements of the blocks whose probes did not pass.

        One probe per block of about ``sqrt(n)`` input elements (random signs, scaled by the elements' magnitude)
        and a few dense random ones: the directional difference ``J u`` is compared output element by output
        element with autograd's ``J u``, so a bug at one element is diluted by its block at most.
        """
        i = self.p.indices[pos]
        x = self.p.inputs[i]
        flat = perturbable(x.data)
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
            est = self.estimate(_direction_shift(self.p, flat, u), h0, settled)
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
                                   real_view(x.data), real_shape(x), others, x.dtype.kind == "c",
                                   j < len(self.p.complex_outputs) and self.p.complex_outputs[j]))
        return found

    def verdict(self, subject: str, reasons: list[str]) -> Verdict:
        statuses = {e.status for e in self.elements}
        status = FAIL if FAIL in statuses else INCONCLUSIVE if statuses or reasons else PASS
        worst = sorted(self.elements, key=lambda e: (e.status != FAIL, -abs(e.analytical - e.numerical)))
        complex_parts = any(self.p.complex_outputs) or any(self.p.inputs[i].dtype.kind == "c" for i in self.p.indices)
        notes = [COMPLEX_COORDINATES] if worst and complex_parts else []
        return Verdict(status, subject, worst, list(reasons) + notes,
                       diagnose(self.blocks()) if status == FAIL else [], self.checked)


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
    signs = run.covectors(rng)
    for pos, x in enumerate(problem.indices):
        if not fast:
            run.columns(pos, range(real_view(problem.inputs[x].data).size))
            continue
        screen, columns = run.screened(pos, signs, rng)
        if screen != PASS:  # the elements behind it, named and diagnosed
            run.columns(pos, sorted(set(columns) | set(run.probes(pos, rng))))
    return run.verdict(subject, [])
