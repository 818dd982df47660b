"""Three-valued verdicts: ``pass``, ``fail`` or ``inconclusive``, the elements behind them and their report.

``fail`` means a real discrepancy beyond the estimated numerical error; ``inconclusive`` means finite differences
cannot decide here (a kink within the step, the dtype's resolution exhausted at this scale, a non-deterministic
function). Only data and text live here; ``judge.py`` decides and ``diagnosis.py`` explains.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Element", "Verdict", "PASS", "FAIL", "INCONCLUSIVE", "combine", "failed_check", "with_second_order"]

PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
_SHOWN = 5  # elements listed per status in a report


@dataclass
class Element:
    """One Jacobian element that did not pass.

    Attributes:
        status: ``"fail"`` or ``"inconclusive"``.
        where: how the report names it, e.g. ``"output 0 (2,) w.r.t. input 0 (2,)"``.
        analytical, numerical, error: autograd's value, the finite-difference estimate and its estimated error.
        reason: why it is inconclusive, or a note on a failure (e.g. near a kink).
    """

    status: str
    where: str
    analytical: float
    numerical: float
    error: float
    reason: str = ""


@dataclass
class Verdict:
    """The outcome of a three-valued check.

    Attributes:
        status: ``"pass"``, ``"fail"`` or ``"inconclusive"``.
        subject: what was checked, e.g. ``"gradcheck"`` or ``"second order"``.
        elements: the elements that failed or were inconclusive, worst failures first.
        reasons: other findings, one line each (a failed contract check, a non-deterministic function, ...).
        diagnosis: what the failing elements have in common (wrong sign, missing factor 2, a region, ...).
        checked: how many Jacobian elements were compared (or probes, in fast mode).

    Example:
        >>> v = Verdict(FAIL, "gradcheck", reasons=["backward is not reentrant"])
        >>> v.status, v.failed, str(v).splitlines()[0]
        ('fail', True, 'gradcheck: fail')
    """

    status: str
    subject: str = "gradcheck"
    elements: list[Element] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    diagnosis: list[str] = field(default_factory=list)
    checked: int = 0

    @property
    def failed(self) -> bool:
        """True for ``fail`` only: ``inconclusive`` is no failure."""
        return self.status == FAIL

    def __str__(self) -> str:
        lines = [f"{self.subject}: {self.status}" + (f" ({self.checked} elements compared)" if self.checked else "")]
        lines += [f"  {r}" for r in self.reasons]
        for status in (FAIL, INCONCLUSIVE):
            chosen = [e for e in self.elements if e.status == status]
            if not chosen:
                continue
            lines.append(f"  {len(chosen)} {'failing' if status == FAIL else 'inconclusive'} element"
                         f"{'s' if len(chosen) > 1 else ''}:")
            lines.append(f"    {'element':<40} {'analytical':>12} {'numerical':>12} {'est. error':>10}")
            for e in chosen[:_SHOWN]:
                lines.append(f"    {e.where:<40} {e.analytical:>12.6g} {e.numerical:>12.6g} {e.error:>10.2g}")
                if e.reason:
                    lines.append(f"      {e.reason}")
            if len(chosen) > _SHOWN:
                lines.append(f"    ... and {len(chosen) - _SHOWN} more")
        lines += [f"  diagnosis: {d}" for d in self.diagnosis]
        return "\n".join(lines)


def failed_check(check: str, message: str, subject: str) -> Verdict:
    """A ``fail`` for a check that is not a Jacobian comparison (reentrancy, undefined grads, shapes, ...)."""
    return Verdict(FAIL, subject, reasons=[f"{check} check failed: {message.splitlines()[0]}"])


def combine(verdicts: Sequence[Verdict], subject: str) -> Verdict:
    """One verdict for several checks (none: ``pass``): ``fail`` beats ``inconclusive`` beats ``pass``.

    Example:
        >>> combine([Verdict(PASS), Verdict(INCONCLUSIVE, reasons=["x"])], "all").status
        'inconclusive'
    """
    statuses = {v.status for v in verdicts}
    status = FAIL if FAIL in statuses else INCONCLUSIVE if INCONCLUSIVE in statuses else PASS
    merged = Verdict(status, subject, checked=int(np.sum([v.checked for v in verdicts])))
    for v in verdicts:
        prefix = "" if v.subject == subject else f"{v.subject}: "
        merged.elements += v.elements
        merged.reasons += [prefix + r for r in v.reasons]
        merged.diagnosis += [prefix + d for d in v.diagnosis]
    return merged


def with_second_order(first: Sequence[Verdict], second: Verdict) -> list[Verdict]:
    """The first-order verdicts and the second-order one, which says so when only it fails (the first order passing:
    an inconclusive one does not show that the first derivatives match)."""
    if second.failed and all(v.status == PASS for v in first):
        second.diagnosis.append("wrong only at second order: the first derivatives match, the backward's own "
                                "derivative does not (a NumPy or .data computation inside backward without "
                                "once_differentiable?)")
    return [*first, second]
