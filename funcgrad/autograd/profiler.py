"""The profiler, as ``torch.autograd.profiler``: where the time of a forward and backward pass goes.

While a ``profile`` is active, a dispatch layer times every op call and every backward node run, and
``record_function`` times user regions. A call nested in another (an op inside a backward rule or a
region) counts toward the outer one's total time but not its self time. ``key_averages()`` groups the
events by name (and input shapes) into a table like torch's; ``export_chrome_trace`` writes them for
chrome://tracing and Perfetto. Not profiling, no layer is installed and nothing is timed.

A profile observes the thread that entered it: ops and nodes other threads run meanwhile are neither
timed nor slowed down (each thread may run a profile of its own).
"""
from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import numpy as np

from funcgrad.core import dispatch
from funcgrad.core.tensor import Tensor

__all__ = ["profile", "record_function", "FunctionEvent", "FunctionEventAvg", "EventList"]

F = TypeVar("F", bound=Callable[..., Any])
_CATEGORIES = {"op": "cpu_op", "node": "autograd", "user": "user_annotation"}
_SORT_KEYS = ("self_cpu_time_total", "cpu_time_total", "cpu_time", "count")


class FunctionEvent:
    """One recorded call: an op (``kind="op"``), a backward node (``"node"``) or a user region (``"user"``).

    Times are in microseconds, as torch's; ``cpu_parent`` is the call this one ran inside, if any.
    """

    __slots__ = ("name", "kind", "input_shapes", "thread", "cpu_parent", "start_ns", "end_ns", "children_ns")
    count = 1

    def __init__(self, name: str, kind: str, input_shapes: list[Any], thread: int,
                 cpu_parent: FunctionEvent | None) -> None:
        self.name = name
        self.kind = kind
        self.input_shapes = input_shapes
        self.thread = thread
        self.cpu_parent = cpu_parent
        self.start_ns = self.end_ns = self.children_ns = 0

    @property
    def key(self) -> str:
        """The name it is grouped under."""
        return self.name

    @property
    def cpu_time_total(self) -> float:
        """Wall time from start to end, nested calls included."""
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self) -> float:
        """Wall time minus that of the calls nested in it."""
        return (self.end_ns - self.start_ns - self.children_ns) / 1e3

    cpu_time = cpu_time_total

    def __repr__(self) -> str:
        return f"<FunctionEvent {self.name} self {self.self_cpu_time_total:.3f}us total {self.cpu_time_total:.3f}us>"


class FunctionEventAvg:
    """The events sharing a key (and, if grouped so, input shapes): call count and summed times."""

    def __init__(self, key: str, input_shapes: list[Any]) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    @property
    def cpu_time(self) -> float:
        """The average total time of one call."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def add(self, event: FunctionEvent) -> None:
        """Count ``event`` in."""
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg {self.key} count {self.count} self {self.self_cpu_time_total:.3f}us "
                f"total {self.cpu_time_total:.3f}us>")


class EventList(list):
    """A list of ``FunctionEvent`` (or, from ``key_averages``, ``FunctionEventAvg``) that prints as a table."""

    @property
    def self_cpu_time_total(self) -> float:
        """The summed self times: the time covered by the events, each instant counted once."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """The events grouped by name (and by input shapes if asked), in order of first appearance."""
        groups: dict[tuple[str, str], FunctionEventAvg] = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shape else ""
            avg = groups.get((e.key, shapes))
            if avg is None:
                avg = groups[(e.key, shapes)] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape else [])
            avg.add(e)
        return EventList(groups.values())

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_name_column_width: int = 55) -> str:
        """A text table like torch's: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, # of Calls
        (and Input Shapes when grouped by them).

        Args:
            sort_by: ``"self_cpu_time_total"``, ``"cpu_time_total"``, ``"cpu_time"`` (average) or ``"count"``,
                largest first; None keeps the list's order.
            row_limit: the most rows to show; 0 or less shows all.
            max_name_column_width: longer names are cut with "...".

        Raises:
            ValueError: an unknown ``sort_by``.
        """
        rows = list(self)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise ValueError(f"sort_by must be one of {', '.join(_SORT_KEYS)} (or None), got {sort_by!r}")
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit > 0:
            rows = rows[:row_limit]
        return _table(rows, self.self_cpu_time_total, max_name_column_width)


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.2f}%" if whole else "0.00%"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _table(rows: list[Any], self_total: float, max_name_width: int) -> str:
    with_shapes = any(r.input_shapes for r in rows)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    widths = [min(max([len(r.key) for r in rows] + [len("Name")]) + 4, max_name_width)] + [12] * 6
    if with_shapes:
        headers.append("Input Shapes")
        widths.append(32)

    def line(cells: Iterable[str]) -> str:
        return "".join(f"{_cut(c, w):>{w}}  " for c, w in zip(cells, widths)).rstrip() + "\n"

    rule = "  ".join("-" * w for w in widths) + "\n"
    body = []
    for r in rows:
        cells = [r.key, _percent(r.self_cpu_time_total, self_total), _format_time(r.self_cpu_time_total),
                 _percent(r.cpu_time_total, self_total), _format_time(r.cpu_time_total), _format_time(r.cpu_time),
                 str(r.count)]
        body.append(line(cells + [str(r.input_shapes)] if with_shapes else cells))
    return (rule + line(headers) + rule + "".join(body) + rule +
            f"Self CPU time total: {_format_time(self_total)}\n")


# ----- recording ------------------------------------------------------------------------------------
def _shapes(values: Iterable[Any]) -> list[Any]:
    """Input shapes as torch prints them: a list per array, a list of those per sequence, [] otherwise."""
    shapes: list[Any] = []
    for v in values:
        if isinstance(v, np.ndarray | Tensor):
            shapes.append(list(v.shape))
        elif isinstance(v, list | tuple) and v and all(isinstance(item, np.ndarray | Tensor) for item in v):
            shapes.append([list(item.shape) for item in v])
        else:
            shapes.append([])
    return shapes


class _Open(threading.local):
    """This thread's calls under way, innermost last."""

    def __init__(self) -> None:
        self.stack: list[FunctionEvent] = []


class _ProfilerLayer(dispatch.Layer):
    """Times op calls and node runs into its profile's events."""

    def __init__(self, record_shapes: bool) -> None:
        self.record_shapes = record_shapes
        self.events: list[FunctionEvent] = []
        self.open = _Open()

    def begin(self, name: str, kind: str, inputs: Iterable[Any]) -> FunctionEvent:
        """Start timing a call."""
        stack = self.open.stack
        event = FunctionEvent(name, kind, _shapes(inputs) if self.record_shapes else [], threading.get_ident(),
                              stack[-1] if stack else None)
        stack.append(event)
        event.start_ns = time.perf_counter_ns()  # last, so the bookkeeping above is not counted
        return event

    def end(self, event: FunctionEvent) -> None:
        """Stop timing the innermost call, ``event``; its time counts toward its parent's children."""
        event.end_ns = time.perf_counter_ns()
        self.open.stack.pop()
        if event.cpu_parent is not None:
            event.cpu_parent.children_ns += event.end_ns - event.start_ns
        self.events.append(event)

    def op(self, spec: Any, proceed: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        event = self.begin(spec.name, "op", (*args, *kwargs.values()))
        try:
            return proceed(args, kwargs)
        finally:
            self.end(event)

    def node(self, node: Any, proceed: Callable[..., Any], grads: list[Any], as_tensors: bool) -> Any:
        event = self.begin(node.name(), "node", grads)
        try:
            return proceed(grads, as_tensors)
        finally:
            self.end(event)


class _Running(threading.local):
    """The layer of the profile this thread is running, if any (one at a time per thread, as torch)."""

    layer: _ProfilerLayer | None = None


_RUNNING = _Running()


class profile:
    """Context manager recording every op call and backward node run inside it, with their times.

    Args:
        enabled: with False, the block runs unprofiled and nothing is recorded.
        record_shapes: keep each call's input shapes (for ``key_averages(group_by_input_shape=True)``).

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.autograd.profiler import profile
        >>> x = fg.tensor([1.0, 2.0], requires_grad=True)
        >>> with profile() as prof:
        ...     (x * x).sum().backward()
        >>> counts = {e.key: e.count for e in prof.key_averages()}
        >>> counts["mul"], counts["MulBackward0"], counts["AccumulateGrad"]
        (1, 1, 1)
        >>> print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=1))  # doctest: +ELLIPSIS
        -...
        Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls
        -...
        Self CPU time total: ...
    """

    def __init__(self, enabled: bool = True, *, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self._layer = _ProfilerLayer(record_shapes)
        self._start_ns = 0

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if _RUNNING.layer is not None:
            raise RuntimeError("a profiler is already running in this thread; profile() blocks cannot be nested "
                               "(as in torch)")
        _RUNNING.layer = self._layer
        self._start_ns = time.perf_counter_ns()
        dispatch.push(self._layer)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            dispatch.pop(self._layer)
            _RUNNING.layer = None

    def events(self) -> EventList:
        """Every recorded call, in order of start."""
        return EventList(sorted(self._layer.events, key=lambda e: e.start_ns))

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """The events grouped by name (and input shapes): see ``EventList.key_averages``."""
        return self.events().key_averages(group_by_input_shape)

    @property
    def self_cpu_time_total(self) -> float:
        """The time covered by the recorded calls, in microseconds."""
        return self.events().self_cpu_time_total

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> None:
        """Write the events as a Chrome trace (JSON, one complete "X" event per call, times in µs since the
        profile began), which chrome://tracing and https://ui.perfetto.dev open."""
        pid = os.getpid()
        trace = [{"name": e.name, "cat": _CATEGORIES[e.kind], "ph": "X", "pid": pid, "tid": e.thread,
                  "ts": (e.start_ns - self._start_ns) / 1e3, "dur": e.cpu_time_total,
                  "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
                 for e in self.events()]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)


class record_function:
    """Mark a region of user code so the profiler times it as one event named ``name``.

    A context manager (or decorator); ops inside it count toward its total time. Without a running
    profiler it does nothing.

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.autograd.profiler import profile, record_function
        >>> with profile() as prof:
        ...     with record_function("double"):
        ...         y = fg.tensor([1.0]) * 2
        >>> [e.name for e in prof.events()]
        ['double', 'mul']
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._timing: tuple[_ProfilerLayer, FunctionEvent] | None = None

    def __enter__(self) -> record_function:
        layer = _RUNNING.layer
        if layer is not None:
            self._timing = layer, layer.begin(self.name, "user", ())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timing is not None:
            layer, event = self._timing
            layer.end(event)
            self._timing = None

    def __call__(self, fn: F) -> F:
        """Use the region as a decorator: every call of ``fn`` is one event."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
