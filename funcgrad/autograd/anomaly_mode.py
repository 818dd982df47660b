"""Anomaly detection, as ``torch.autograd.detect_anomaly``: where did a failing or NaN gradient come from?

While the mode is on in a thread, a dispatch layer installed in that thread (it observes that thread
only; each thread turns the mode on for itself) stamps every new node with the traceback of the
forward call that created it (``node.metadata["traceback_"]``; ``"parent_"`` is the node whose backward
created it, as torch), and an exception raised while a node runs backward gets those tracebacks as a
note. With ``check_nan`` a backward returning NaN raises; with ``check_forward`` (beyond PyTorch) so does
the first forward op that turns finite inputs into NaN or Inf. In-place ops report to ``record_inplace``
so that a saved tensor's version error can say what changed it. Off, no layer is installed.
"""
from __future__ import annotations

import copy
import functools
import os
import threading
import traceback
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np

from funcgrad.core import dispatch
from funcgrad.core.graph import Node, next_sequence_nr, register_inplace_hint
from funcgrad.core.tensor import Tensor

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "record_creation", "record_inplace", "inplace_hint"]

F = TypeVar("F", bound=Callable[..., Any])
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_MACHINERY = {dispatch.__file__, __file__, os.path.join(os.path.dirname(__file__), "profiler.py")}
_NO_TRACE = ("No forward pass information available. Enable detect anomaly during forward pass for more "
             "information.")


class _ThreadState(threading.local):
    """This thread's anomaly settings, and the nodes whose backward it is running (innermost last)."""

    enabled = False
    check_nan = True
    check_forward = False

    def __init__(self) -> None:
        self.running: list[Node] = []


STATE = _ThreadState()


def is_anomaly_enabled() -> bool:
    """Return True if anomaly detection is on in this thread."""
    return STATE.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Return True if anomaly detection, when on, checks backward results for NaN."""
    return STATE.check_nan


# ----- switching the mode ---------------------------------------------------------------------------
class _Installation:
    """How many threads have the mode on: what it saw change in place is forgotten when none has."""

    lock = threading.Lock()
    users = 0


def _settings() -> tuple[bool, bool, bool]:
    return STATE.enabled, STATE.check_nan, STATE.check_forward


def _set(enabled: bool, check_nan: bool, check_forward: bool) -> None:
    was = STATE.enabled
    STATE.enabled, STATE.check_nan, STATE.check_forward = enabled, check_nan, check_forward
    if enabled == was:
        return
    if enabled:
        dispatch.push(_LAYER)  # into this thread's layers: the mode observes the thread that turned it on
    else:
        dispatch.pop(_LAYER)
    with _Installation.lock:
        _Installation.users += 1 if enabled else -1
        if not _Installation.users:
            _CHANGES.clear()


class detect_anomaly:
    """Context manager and decorator turning anomaly detection on for this thread.

    Every node created inside records the traceback of its forward call; an error in backward is
    re-raised with a note showing it. Slow: for debugging only.

    Args:
        check_nan: raise when a node's backward returns NaN, naming the node.
        check_forward: raise when a forward op turns finite inputs into NaN or Inf, naming the op, the
            line that called it and its inputs' statistics (not in PyTorch).

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.autograd.anomaly_mode import detect_anomaly
        >>> x = fg.tensor([0.0, 1.0], requires_grad=True)
        >>> with detect_anomaly():
        ...     y = fg.sqrt(x) * 0
        ...     y.sum().backward()
        Traceback (most recent call last):
        ...
        RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
        Error detected in SqrtBackward0. Traceback of forward call that caused the error:
        ...
            y = fg.sqrt(x) * 0
    """

    def __init__(self, check_nan: bool = True, *, check_forward: bool = False) -> None:
        self.check_nan = check_nan
        self.check_forward = check_forward
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self._previous = _settings()
        _set(True, self.check_nan, self.check_forward)

    def __exit__(self, *exc: object) -> None:
        _set(*self._previous)

    def __call__(self, fn: F) -> F:
        """Use the mode as a decorator: ``fn`` runs with anomaly detection on."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with copy.copy(self):  # a copy per call keeps its own previous settings (recursion, threads)
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class set_detect_anomaly:
    """Turn anomaly detection on or off for this thread: at once, and back on leaving a ``with`` block.

    Args:
        mode: on or off.
        check_nan, check_forward: as for ``detect_anomaly``.

    Example:
        >>> from funcgrad.autograd.anomaly_mode import is_anomaly_enabled, set_detect_anomaly
        >>> with set_detect_anomaly(True):
        ...     is_anomaly_enabled()
        True
        >>> is_anomaly_enabled()
        False
    """

    def __init__(self, mode: bool, check_nan: bool = True, *, check_forward: bool = False) -> None:
        self._previous = _settings()
        _set(bool(mode), check_nan, check_forward)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _set(*self._previous)


# ----- the layer ------------------------------------------------------------------------------------
class _AnomalyLayer(dispatch.Layer):
    """Stamps new nodes with their forward traceback; annotates and checks node runs."""

    def op(self, spec: Any, proceed: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not STATE.enabled:
            return proceed(args, kwargs)
        first_new = next_sequence_nr()  # nodes this call creates are numbered after it
        out = proceed(args, kwargs)
        if STATE.check_forward and not STATE.running:
            _check_forward(spec, args, kwargs, out)
        for t in out if isinstance(out, tuple) else (out,):
            if isinstance(t, Tensor) and t.grad_fn is not None and t.grad_fn.sequence_nr > first_new:
                record_creation(t.grad_fn)
        return out

    def node(self, node: Any, proceed: Callable[..., Any], grads: list[Any], as_tensors: bool) -> Any:
        if not STATE.enabled:
            return proceed(grads, as_tensors)
        STATE.running.append(node)
        try:
            grads_in = proceed(grads, as_tensors)
            if STATE.check_nan:
                _check_nan(node, grads_in)
            return grads_in
        except Exception as error:
            _add_note(error, _report(node))
            raise
        finally:
            STATE.running.pop()

    def inplace(self, tensor: Any, op: str, args: tuple[Any, ...] = ()) -> None:
        record_inplace(tensor, op)


_LAYER = _AnomalyLayer()


def record_creation(node: Node) -> None:
    """In anomaly mode, stamp ``node`` with the forward call creating it (the hook of ``Function.apply``)."""
    if not STATE.enabled or "traceback_" in node.metadata:
        return
    node.metadata["traceback_"] = _user_stack().format()
    if STATE.running:
        node.metadata["parent_"] = STATE.running[-1]


def _user_stack() -> traceback.StackSummary:
    """The current stack without its innermost funcgrad frames, so it ends at the user's call, and without
    the dispatch machinery's frames anywhere."""
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_PACKAGE):
        frames.pop()
    return traceback.StackSummary.from_list([f for f in frames if f.filename not in _MACHINERY])


def _report(node: Node) -> str:
    """Where ``node`` (and each node whose backward created it) came from, in torch's words."""
    parts = [f"Error detected in {node.name()}. {_forward_trace(node, 'caused the error')}"]
    parent = node.metadata.get("parent_")
    while parent is not None:
        parts.append(f"\n\nPrevious calculation was induced by {parent.name()}. "
                     f"{_forward_trace(parent, 'induced the previous calculation')}")
        parent = parent.metadata.get("parent_")
    return "".join(parts).rstrip("\n")


def _forward_trace(node: Node, what: str) -> str:
    stack = node.metadata.get("traceback_")
    return _NO_TRACE if stack is None else f"Traceback of forward call that {what}:\n{''.join(stack)}"


def _add_note(error: BaseException, text: str) -> None:
    if hasattr(error, "add_note"):  # Python >= 3.11: shown with the error, which keeps its type
        error.add_note(text)
    else:
        warnings.warn(text, stacklevel=3)  # torch's way


def _array(value: Any) -> np.ndarray:
    return value.data if isinstance(value, Tensor) else np.asarray(value)


def _check_nan(node: Node, grads_in: Any) -> None:
    for i, g in enumerate(grads_in):
        if g is not None and np.isnan(_array(g)).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


# ----- forward check --------------------------------------------------------------------------------
def _named_inputs(spec: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, np.ndarray]]:
    """The op's numeric inputs, named by parameter (``tensors[1]`` for an element of a sequence)."""
    named = []
    for name, value in zip(spec.params, spec.bind(args, kwargs)):
        items = enumerate(value) if spec.sequence == name else [(None, value)]
        for i, item in items:
            array = _array(item) if isinstance(item, Tensor | np.ndarray | float | int | complex) else None
            if array is not None and array.dtype.kind in "iufc":
                named.append((name if i is None else f"{name}[{i}]", array))
    return named


def _describe(name: str, a: np.ndarray) -> str:
    finite = np.isfinite(a)
    values = np.abs(a[finite]) if a.dtype.kind == "c" else a[finite]
    bounds = f"min {values.min():.6g}, max {values.max():.6g}" if values.size else "no finite values"
    modulus = " (of |x|)" if a.dtype.kind == "c" else ""
    return (f"  {name}: {a.dtype} of shape {list(a.shape)}, {bounds}{modulus}, "
            f"{a.size - int(finite.sum())} non-finite\n")


def _check_forward(spec: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
    """Raise if ``out`` holds NaN or Inf although every input of the op is finite."""
    outputs = [_array(o) for o in (out if isinstance(out, tuple) else (out,))]
    bad = [(i, o) for i, o in enumerate(outputs) if o.dtype.kind in "fc" and not np.isfinite(o).all()]
    if not bad:
        return
    inputs = _named_inputs(spec, args, kwargs)
    if not all(np.isfinite(a).all() for _, a in inputs):
        return
    i, o = bad[0]
    where = traceback.format_list(_user_stack()[-1:])
    raise RuntimeError(
        f"Function '{spec.name}' returned {int(np.isnan(o).sum())} nan and {int(np.isinf(o).sum())} inf values in "
        f"its {i}th output (of shape {list(o.shape)}) from finite inputs. Forward call:\n{''.join(where)}"
        f"Inputs:\n{''.join(_describe(name, a) for name, a in inputs)}")


# ----- in-place changes -----------------------------------------------------------------------------
class _Change(NamedTuple):
    """One in-place change of a version counter."""

    version: int  # the version it produced
    op: str
    where: str  # the user's line, formatted as in a traceback


# id(version counter) -> (the counter, its recent changes). Holding the counter keeps its id from being
# reused; both bounds keep a long anomaly-mode run from growing this without limit.
_CHANGES: dict[int, tuple[list[int], list[_Change]]] = {}
_MAX_COUNTERS = 4096
_MAX_CHANGES = 8


def record_inplace(tensor: Tensor, op: str) -> None:
    """In anomaly mode, remember that ``op`` (e.g. ``"mul"`` for ``mul_``) is about to change ``tensor``.

    The hook of in-place ops; ``inplace_hint`` later tells a version error about it.
    """
    if not STATE.enabled:
        return
    counter = tensor._version_counter
    entry = _CHANGES.pop(id(counter), None) or (counter, [])  # re-inserted last: oldest entries go first
    entry[1].append(_Change(counter[0] + 1, f"{op}_", "".join(traceback.format_list(_user_stack()[-1:]))))
    del entry[1][:-_MAX_CHANGES]
    _CHANGES[id(counter)] = entry
    if len(_CHANGES) > _MAX_COUNTERS:
        del _CHANGES[next(iter(_CHANGES))]


def inplace_hint(counter: list[int], saved: int) -> str:
    """What anomaly mode saw change a tensor (its version ``counter``) since version ``saved``; "" if nothing.

    For the saved-tensor version error.

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.autograd.anomaly_mode import detect_anomaly, inplace_hint, record_inplace
        >>> x = fg.tensor([1.0])
        >>> with detect_anomaly():
        ...     record_inplace(x, "mul")
        ...     print(inplace_hint(x._version_counter, 0))  # doctest: +ELLIPSIS
        <BLANKLINE>
        Anomaly mode saw it changed in place since it was saved, by:
        mul_ (version 0 -> 1) at
          File "<doctest ...>", line 2, in <module>
            record_inplace(x, "mul")
    """
    entry = _CHANGES.get(id(counter))
    changes = [c for c in entry[1] if c.version > saved] if entry is not None and entry[0] is counter else []
    if not changes:
        return ""
    return "\nAnomaly mode saw it changed in place since it was saved, by:\n" + "".join(
        f"{c.op} (version {c.version - 1} -> {c.version}) at\n{c.where}" for c in changes).rstrip("\n")


register_inplace_hint(inplace_hint)
