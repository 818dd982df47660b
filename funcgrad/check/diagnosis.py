"""What the failing elements of a Jacobian have in common, in words: wrong sign, a missing factor (2, 1/2, pi),
transposed, a missing broadcast reduction, the gradient of the wrong input, a backward ignoring grad_output, a
zero (cut) gradient, or wrong only in a region of the input ("input 0 < -3") or at a few elements. It reads
finished comparisons and checks nothing itself.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["Block", "diagnose", "round_between", "conjugated"]

_FACTORS = {2.0: "a factor 2 too many (analytical = 2 x numerical)",
            0.5: "a missing factor 2 (analytical = 1/2 x numerical)",
            np.pi: "a factor pi too many (analytical = pi x numerical)",
            1 / np.pi: "a missing factor pi (analytical = numerical / pi)"}
_CLOSE = 2e-3  # relative agreement that counts as "equal" in a pattern
_FEW = 3  # at most this many wrong input elements are named one by one


class Block:
    """One output/input block of a finished comparison.

    Args:
        output, input: how reports name them.
        analytical, numerical: ``(out.size, in.size)``; numerical is NaN where it was not computed.
        failed: the elements that failed.
        x: the input's values, flat.
        in_shape: the input's shape.
        others: other inputs' numerical blocks for the same output, by name.
        complex_input, complex_output: the input or the output is complex (columns or rows in (real, imaginary)
            pairs).
    """

    def __init__(self, output: str, input: str, analytical: np.ndarray, numerical: np.ndarray, failed: np.ndarray,
                 x: np.ndarray, in_shape: tuple[int, ...], others: dict[str, np.ndarray], complex_input: bool = False,
                 complex_output: bool = False) -> None:
        self.output, self.input = output, input
        self.analytical, self.numerical, self.failed = analytical, numerical, failed
        self.x, self.in_shape, self.others = x, in_shape, others
        self.complex_input, self.complex_output = complex_input, complex_output


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    scale = max(float(np.max(np.abs(b), initial=0.0)), 1e-300)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= _CLOSE * (np.abs(b) + 1e-3 * scale)))


def round_between(low: float, high: float) -> float:
    """The number with the fewest significant digits in ``(low, high]``.

    Example:
        >>> round_between(-3.05, -2.97), round_between(0.12, 0.5)
        (-3.0, 0.3)
    """
    top = int(np.floor(np.log10(max(abs(low), abs(high), 1e-300)))) + 1
    middle = (low + high) / 2
    for p in range(top, top - 17, -1):
        for t in (np.round(middle / 10.0 ** p) * 10.0 ** p, np.ceil(low / 10.0 ** p) * 10.0 ** p):
            if low < t <= high:
                return round(float(t), max(-p, 0))
    return float(high)


def _ratio(b: Block) -> str | None:
    """Wrong sign or a constant factor over the failing elements."""
    f = b.failed & (np.abs(b.numerical) > 0)
    if not f.any():
        return None
    ratio = b.analytical[f] / b.numerical[f]
    r = float(np.median(ratio))
    if not np.any(ratio):
        return ("the analytical derivative is zero where the numerical one is not: a gradient computed outside "
                "autograd (NumPy on .data, a constant Tensor) or a path cut by detach()")
    if np.ptp(ratio) > _CLOSE * max(abs(r), 1e-12) or abs(r - 1) < _CLOSE:  # (not "a factor 1": an offset)
        return None
    if abs(r + 1) < _CLOSE:
        return "wrong sign: analytical = -numerical"
    named = [text for factor, text in _FACTORS.items() if abs(r - factor) < _CLOSE * factor]
    return named[0] if named else f"a wrong constant factor: analytical = {r:.4g} x numerical"


def conjugated(b: Block) -> str | None:
    """The sign of the imaginary parts is wrong: of the returned gradient (its columns for imaginary input parts) or
    of grad_output (the rows for imaginary output parts); or each element's 2x2 block is transposed (a holomorphic
    rule without its conj)."""
    num, ana = b.numerical, b.analytical
    if np.isnan(num).any() or _close(ana, num):
        return None
    if b.complex_input and _close(ana, num * np.tile([1.0, -1.0], num.shape[1] // 2)):
        return (f"conjugated: the gradient of {b.input} has imaginary parts of the wrong sign (a conj() too many or "
                "too few on what backward returns)")
    if b.complex_output and _close(ana, num * np.tile([1.0, -1.0], num.shape[0] // 2)[:, None]):
        return (f"conjugated grad_output: the rows for the imaginary part of {b.output} have the wrong sign (the "
                "backward uses conj(grad_output))")
    if b.complex_input and b.complex_output and num.shape[0] == num.shape[1]:
        n = num.shape[0] // 2
        pairs = num.reshape(n, 2, n, 2).transpose(0, 3, 2, 1).reshape(num.shape)  # each 2x2 block transposed
        if _close(ana, pairs):
            return "a missing conj(): grad * f'(z) instead of grad * conj(f'(z)) (each element's 2x2 block transposed)"
    return None


def _transposed(b: Block) -> str | None:
    """The Jacobian, or each gradient as a matrix, is the transpose of the right one."""
    num, ana = b.numerical, b.analytical
    if np.isnan(num).any():
        return None
    if num.shape[0] == num.shape[1] > 1 and not _close(ana, num) and _close(ana, num.T):
        return "transposed: the analytical Jacobian is the transpose of the numerical one"
    if len(b.in_shape) == 2 and b.in_shape[0] == b.in_shape[1] > 1:
        a = b.in_shape[0]
        swapped = num.reshape(-1, a, a).transpose(0, 2, 1).reshape(num.shape)
        if _close(ana, swapped):
            return f"transposed: the gradient of {b.input} is the transpose of the right one"
    return None


def _broadcast(b: Block) -> str | None:
    """An input broadcast to several outputs whose gradient is not summed over them."""
    cols = np.nonzero(b.failed.any(axis=0))[0]
    if not cols.size:
        return None
    num, ana = b.numerical[:, cols], b.analytical[:, cols]
    scale = max(float(np.nanmax(np.abs(num), initial=0.0)), 1e-300)
    copies = (np.abs(num) > 1e-8 * scale).sum(axis=0)
    if np.any(copies < 2):
        return None
    total_num, total_ana = np.nansum(num, axis=0), ana.sum(axis=0)
    fewer = (np.abs(ana) > 1e-8 * scale).sum(axis=0) < copies
    mean = np.all(np.abs(total_ana - total_num / copies) <= _CLOSE * np.abs(total_num / copies) + 1e-12 * scale)
    if mean or np.all(fewer):
        return (f"missing broadcast reduction: {b.input} reaches {int(np.median(copies))} elements of {b.output} "
                "by broadcasting, but its gradient is not the sum over them (a mean, or a single copy?)")
    return None


def _ignores_grad_output(b: Block) -> str | None:
    """Every output element gets the same gradient row: the backward does not multiply by grad_output."""
    ana, num = b.analytical, b.numerical
    if ana.shape[0] < 2 or np.isnan(num).any() or not np.any(ana) or _close(num, num[:1].repeat(len(num), 0)):
        return None
    if _close(ana, ana[:1].repeat(len(ana), 0)):
        return "every row of the analytical Jacobian is the same: the backward ignores grad_output"
    return None


def _wrong_input(b: Block) -> str | None:
    for name, num in b.others.items():
        if not np.isnan(num).any() and _close(b.analytical, num) and not _close(num, b.numerical):
            return (f"gradient of the wrong input: the analytical Jacobian w.r.t. {b.input} is the numerical one "
                    f"w.r.t. {name} (gradients swapped, or the wrong saved tensor used?)")
    return None


def _region(b: Block) -> str | None:
    """Wrong only for input values beyond a threshold, or only at a few elements."""
    computed = ~np.isnan(b.numerical).all(axis=0)
    bad = b.failed.any(axis=0)
    good = computed & ~bad
    if not bad.any() or good.sum() < _FEW:  # (one good element beside one bad would make any threshold a "region")
        return None
    xb, xg = b.x[bad].astype(np.float64), b.x[good].astype(np.float64)
    if xb.max() < xg.min():
        return f"wrong only in a region: {b.input} < {round_between(float(xb.max()), float(xg.min())):g} " \
               f"({int(bad.sum())} of {int(computed.sum())} elements)"
    if xb.min() > xg.max():
        t = -round_between(-float(xb.min()), -float(xg.max()))
        return f"wrong only in a region: {b.input} > {t:g} ({int(bad.sum())} of {int(computed.sum())} elements)"
    if bad.sum() <= _FEW and computed.sum() > 2 * _FEW:
        where = ", ".join(str(tuple(int(c) for c in np.unravel_index(k, b.in_shape))) for k in np.nonzero(bad)[0])
        return f"wrong only at {b.input} {where} ({int(bad.sum())} of {int(computed.sum())} elements)"
    return None


_PATTERNS: Sequence[Callable[[Block], str | None]] = (conjugated, _wrong_input, _transposed, _ignores_grad_output,
                                                      _broadcast, _ratio, _region)


def diagnose(blocks: Sequence[Block]) -> list[str]:
    """One line per failing block naming the first pattern that fits (region comes on top of a ratio).

    Example:
        >>> num = np.diag([1.0, 2.0, 3.0])
        >>> b = Block("output 0", "input 0", -num, num, np.eye(3, dtype=bool), np.ones(3), (3,), {})
        >>> diagnose([b])
        ['output 0 w.r.t. input 0: wrong sign: analytical = -numerical']
    """
    lines = []
    for b in blocks:
        if not b.failed.any():
            continue
        found = [text for pattern in _PATTERNS if (text := pattern(b)) is not None]
        if found:
            lines.append(f"{b.output} w.r.t. {b.input}: " + "; ".join(found[:2]))
    return lines
