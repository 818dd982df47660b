"""``GradcheckError`` and the text of its reports: which check failed, where, the worst elements with their
coordinates, and the likely causes. Large Jacobians are summarised, never dumped. No checking happens here.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from funcgrad.check.numerical import COMPLEX_COORDINATES

__all__ = ["GradcheckError", "Mismatch", "format_mismatch"]

_SHOW_FULL = 36  # Jacobians with at most this many elements are printed whole
_WORST = 5


class GradcheckError(RuntimeError):
    """Raised by the checks when a derivative is wrong; ``check`` names the check that failed.

    Attributes:
        check: one of ``"jacobian"``, ``"kink"``, ``"reentrancy"``, ``"undefined grad"``, ``"batched"``,
            ``"forward AD"``, ``"batched forward"``, ``"dtype"``, ``"shape"``, ``"once_differentiable"``,
            ``"function contract"``; prefixed by ``"second order "`` in ``gradgradcheck``.
        output_index, input_index: where it failed, when that applies.
        verdict: the ``Verdict`` of a three-valued check that failed (its check is ``"verdict"``).

    Example:
        >>> err = GradcheckError("jacobian", "Jacobian mismatch", output_index=0, input_index=1)
        >>> err.check, str(err)
        ('jacobian', 'Jacobian mismatch')
    """

    def __init__(self, check: str, message: str, output_index: int | None = None,
                 input_index: int | None = None, verdict: Any = None) -> None:
        super().__init__(message)
        self.check = check
        self.output_index = output_index
        self.input_index = input_index
        self.verdict = verdict


@dataclass
class Mismatch:
    """One output/input block where the analytical Jacobian disagrees with the numerical one.

    Attributes:
        output_label, input_label: how the report names the output and the input.
        numerical, analytical: ``(out.size, in.size)`` float64 matrices.
        allowed: the per-element tolerance.
        out_shape, in_shape: to turn flat indices into coordinates.
        causes: likely causes, most likely first.
        complex_parts: the output or the input is complex (compared as real and imaginary parts).
    """

    output_label: str
    input_label: str
    numerical: np.ndarray
    analytical: np.ndarray
    allowed: np.ndarray
    out_shape: tuple[int, ...]
    in_shape: tuple[int, ...]
    causes: list[str] = field(default_factory=list)
    complex_parts: bool = False

    @property
    def violations(self) -> np.ndarray:
        """Boolean mask of the elements outside the tolerance."""
        return ~(np.abs(self.analytical - self.numerical) <= self.allowed)


def _coords(flat: int, shape: Sequence[int]) -> str:
    return str(tuple(int(c) for c in np.unravel_index(flat, tuple(shape)))) if shape else "()"


def _worst_lines(m: Mismatch) -> list[str]:
    err = np.abs(m.analytical - m.numerical)
    bad = m.violations
    order = np.argsort(np.where(bad, np.nan_to_num(err, nan=np.inf), -1.0), axis=None)[::-1][:_WORST]
    lines = [f"  {'output coord':>14} {'input coord':>14} {'numerical':>13} {'analytical':>13} "
             f"{'abs err':>10} {'rel err':>10}"]
    for flat in order:
        r, c = np.unravel_index(flat, err.shape)
        if not bad[r, c]:
            break
        rel = err[r, c] / max(abs(m.numerical[r, c]), 1e-300)
        lines.append(f"  {_coords(r, m.out_shape):>14} {_coords(c, m.in_shape):>14} {m.numerical[r, c]:>13.6g} "
                     f"{m.analytical[r, c]:>13.6g} {err[r, c]:>10.3g} {rel:>10.3g}")
    return lines


def format_mismatch(m: Mismatch, title: str = "Jacobian mismatch") -> str:
    """The report of one mismatching block: counts, the worst elements, both Jacobians or a summary.

    Example:
        >>> m = Mismatch("output 0", "input 0", np.eye(2), 2 * np.eye(2), np.full((2, 2), 1e-5), (2,), (2,))
        >>> print(format_mismatch(m).splitlines()[0])
        Jacobian mismatch for output 0 with respect to input 0: 2 of 4 elements are outside the tolerance.
    """
    bad = m.violations
    lines = [f"{title} for {m.output_label} with respect to {m.input_label}: {int(bad.sum())} of {bad.size} "
             "elements are outside the tolerance.", *([COMPLEX_COORDINATES + "."] if m.complex_parts else []),
             "worst elements:", *_worst_lines(m)]
    if m.numerical.size <= _SHOW_FULL:
        with np.printoptions(precision=6, linewidth=110, suppress=True):
            lines += [f"numerical Jacobian:\n{m.numerical}", f"analytical Jacobian:\n{m.analytical}"]
    else:
        err = np.abs(m.analytical - m.numerical)
        rows, cols = np.nonzero(bad)
        lines.append(f"Jacobian of shape {m.numerical.shape} not shown: max abs error {np.nanmax(err):.3g}, "
                     f"violations in {len(set(rows.tolist()))} output and {len(set(cols.tolist()))} input "
                     "elements.")
    lines += format_causes(m.causes)
    return "\n".join(lines)


def format_causes(causes: Sequence[str]) -> list[str]:
    """The "likely causes" lines (none when there is no cause to name)."""
    return ["likely causes:", *(f"  - {c}" for c in causes)] if causes else []
