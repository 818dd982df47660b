"""The benchmark harness: workloads as declarative entries, interleaved timing, verification, the table.

A :class:`Workload` builds its variants (one zero-argument callable per framework, each returning the
gradients as NumPy arrays); the harness checks that every variant agrees with the reference variant,
then times them round-robin (rotating the order each round, after a warm-up) and reports medians,
ratios and PASS/MISS for the workload's :class:`Target` entries.
"""
from __future__ import annotations

import cProfile
import gc
import io
import math
import pstats
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Runner = Callable[[], Sequence[np.ndarray]]
Sizes = Mapping[str, Any]


@dataclass(frozen=True)
class Target:
    """A goal: the subject's median at most ``max_ratio`` times the fastest of ``references``."""

    references: tuple[str, ...]
    max_ratio: float
    text: str
    subject: str | None = None
    """The row the goal is about, if not the workload's subject."""


@dataclass(frozen=True)
class Workload:
    """One benchmarked computation.

    Attributes:
        name: the name used by ``--only`` and in the table.
        about: one line saying what is computed.
        build: ``build(sizes, frameworks)`` returns the variants ``{label: runner}``; ``frameworks``
            (None = all installed) limits which variants are built.
        sizes: the sizes the targets are about; ``small_sizes`` the ones the smoke test uses.
        ops: the number of recorded ops for a per-op column, given the sizes (None: no column).
        targets: the goals printed with PASS/MISS.
        subject: the variant the ratios are about; reference: the variant every other must agree with.
        collect_garbage: time with the garbage collector running, as a user's loop runs (the default:
            collecting is part of the cost of graphs of many Python objects); ``--gc-off`` pauses it during
            each sample instead, for comparison.
    """

    name: str
    about: str
    build: Callable[[Sizes, frozenset[str] | None], dict[str, Runner]]
    sizes: Sizes
    small_sizes: Sizes
    ops: Callable[[Sizes], int] | None = None
    targets: tuple[Target, ...] = ()
    subject: str = "funcgrad"
    reference: str = "numpy"
    rtol: float = 1e-7
    collect_garbage: bool = True


@dataclass
class Result:
    """The timings of one workload: seconds per call for every sample of every variant."""

    workload: Workload
    samples: dict[str, list[float]] = field(default_factory=dict)

    def median(self, label: str) -> float:
        """The median seconds per call of one variant."""
        return statistics.median(self.samples[label])

    def spread(self, label: str) -> float:
        """The interquartile range relative to the median."""
        data = self.samples[label]
        if len(data) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(data, n=4)
        return (q3 - q1) / self.median(label)


def verify(workload: Workload, outputs: Mapping[str, Sequence[np.ndarray]]) -> None:
    """Raise AssertionError unless every variant's gradients match the reference variant's.

    The tolerance is relative to each reference gradient's largest entry, so gradients that are tiny
    everywhere (as after a long chain) are still compared digit by digit.
    """
    expected = outputs[workload.reference]
    for label, got in outputs.items():
        if len(got) != len(expected):
            raise AssertionError(f"{workload.name}: {label} returned {len(got)} gradients, "
                                 f"{workload.reference} {len(expected)}")
        for i, (g, e) in enumerate(zip(got, expected)):
            g, e = np.asarray(g), np.asarray(e)
            scale = float(np.max(np.abs(e))) if e.size else 0.0
            if g.shape != e.shape or not np.allclose(g, e, rtol=workload.rtol, atol=workload.rtol * scale):
                diff = np.max(np.abs(g - e)) if g.shape == e.shape else f"shape {g.shape} vs {e.shape}"
                raise AssertionError(f"{workload.name}: gradient {i} of {label} differs from "
                                     f"{workload.reference}'s (max abs difference {diff}, scale {scale:.3g})")


def time_call(runner: Runner, loops: int, collect_garbage: bool = False) -> float:
    """Seconds per call of ``runner`` over ``loops`` calls, with the garbage collector paused unless
    ``collect_garbage``.

    Garbage is collected just before, and the collector is re-enabled afterwards in every case.
    """
    gc.collect()
    if not collect_garbage:
        gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(loops):
            runner()
        return (time.perf_counter() - start) / loops
    finally:
        gc.enable()


# Rows timed in a phase of their own, after the others' rounds: JAX's dispatch, interleaved with the other rows, slows
# the rows timed after it (torch's nested create_graph by a quarter to a third at orders 1-3, funcgrad's by 5%)
APART = ("jax",)


def measure(workload: Workload, variants: Mapping[str, Runner], repeat: int, min_sample: float,
            gc_off: bool = False) -> Result:
    """Verify, warm up and time ``variants`` round-robin, rotating the order every round; rows whose label starts with
    one of ``APART`` are verified, warmed up and timed in rounds of their own after the others'.

    Each sample loops a variant enough times to last at least ``min_sample`` seconds; ``gc_off`` pauses the
    garbage collector during samples even for workloads that time it.
    """
    collect = workload.collect_garbage and not gc_off
    result = Result(workload, {label: [] for label in variants})
    apart = [label for label in variants if label.startswith(APART)]
    reference = variants[workload.reference]()
    for labels in ([label for label in variants if label not in apart], apart):
        verify(workload, {workload.reference: reference}  # (its first call: a runner may change state, an SGD step)
               | {label: variants[label]() for label in labels if label != workload.reference})  # also a warm-up
        loops = {label: max(1, math.ceil(min_sample / time_call(variants[label], 1, collect))) for label in labels}
        for r in range(repeat if labels else 0):
            for label in labels[r % len(labels):] + labels[:r % len(labels)]:
                result.samples[label].append(time_call(variants[label], loops[label], collect))
    return result


def _duration(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:7.2f} {unit}"
    return f"{seconds / 1e-9:7.0f} ns"


def table(results: Sequence[Result]) -> str:
    """Medians, spreads, per-op times and ``funcgrad ÷ row`` ratios, one row per variant."""
    header = f"{'workload':<17} {'variant':<10} {'median':>10} {'IQR':>6} {'min':>10} {'µs/op':>7}  funcgrad ÷ row"
    lines = [header, "-" * len(header)]
    for res in results:
        wl = res.workload
        ops = wl.ops(wl.sizes) if wl.ops else None
        subject = res.median(wl.subject) if wl.subject in res.samples else None
        for i, label in enumerate(res.samples):
            med = res.median(label)
            per_op = f"{med / ops * 1e6:7.2f}" if ops else ""
            ratio = f"{subject / med:8.2f}x" if subject is not None and label != wl.subject else ""
            lines.append(f"{wl.name if i == 0 else '':<17} {label:<10} {_duration(med):>10} "
                         f"{res.spread(label):6.1%} {_duration(min(res.samples[label])):>10} {per_op:>7}  {ratio}")
    return "\n".join(lines)


def target_report(results: Sequence[Result]) -> str:
    """One line per target: the two medians, their ratio, the limit and PASS / MISS (SKIP if absent)."""
    lines = []
    for res in results:
        wl = res.workload
        for target in wl.targets:
            present = [ref for ref in target.references if ref in res.samples]
            subject = target.subject or wl.subject
            goal = f"{wl.name}: {target.text} (ratio ≤ {target.max_ratio:g})"
            if not present or subject not in res.samples:
                lines.append(f"SKIP  {goal}: {' / '.join(target.references)} not measured")
                continue
            ref = min(present, key=res.median)
            ratio = res.median(subject) / res.median(ref)
            verdict = "PASS" if ratio <= target.max_ratio else "MISS"
            lines.append(f"{verdict}  {goal}: {subject} / {ref} = {ratio:.2f}")
    return "\n".join(lines)


def run(workloads: Sequence[Workload], repeat: int, min_sample: float = 0.01,
        frameworks: frozenset[str] | None = None, echo: Callable[[str], None] = print,
        gc_off: bool = False) -> list[Result]:
    """Measure every workload at its full sizes, echoing progress; return the results."""
    results = []
    try:
        for wl in workloads:
            variants = wl.build(wl.sizes, frameworks)
            gc.freeze()  # what exists now (modules, inputs) is not garbage: keep it out of gc.collect()'s scan
            echo(f"  {wl.name}: {wl.about} — {', '.join(variants)} × {repeat} rounds")
            results.append(measure(wl, variants, repeat, min_sample, gc_off))
    finally:
        gc.unfreeze()
    return results


def profile(workload: Workload, label: str, seconds: float = 2.0, top: int = 20) -> str:
    """cProfile's top ``top`` functions by own time over about ``seconds`` of calls to one variant."""
    runner = workload.build(workload.sizes, frozenset({label}))[label]
    loops = max(1, math.ceil(seconds / time_call(runner, 1)))
    profiler = cProfile.Profile()
    profiler.runcall(lambda: [runner() for _ in range(loops)])
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return f"{workload.name} / {label}, {loops} calls:\n{out.getvalue()}"
