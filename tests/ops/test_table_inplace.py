"""The table test of in-place changes after a recording: for every op with samples (and every NumPy entry point
on Tensors), each Tensor argument changed in place after the forward (and, for second derivatives, between the
first backward with ``create_graph`` and the second) makes the backward either raise torch's "modified by an
inplace operation" error or give the gradient of the values the forward saw. Never a different gradient with
no error: a node that saved a value through a path the version check does not see (a view of a Tensor's
memory, an alias with a counter of its own) is caught here.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.ops.registry import OPS
from tests.ops.samples import SAMPLES, S
from tests.ops.samples_numpy import SAMPLES as NUMPY_SAMPLES
from tests.ops.test_numpy_table import _callable, _name
from tests.ops.test_table import call, call_with

CHANGED = "modified by an inplace operation"

Recording = Callable[[], tuple[Any, tuple[Any, ...]]]  # a fresh call of the op: its function and leaves


def _outputs(out: Any) -> list[fg.Tensor]:
    """The results that require grad."""
    results = out if isinstance(out, tuple | list) else (out,)
    return [o for o in results if isinstance(o, fg.Tensor) and o.requires_grad]


def _weighted_sum(tensors: list[Any], seed: float) -> Any:
    """sum_k <w_k, t_k> with fixed weights w_k (the real part of complex terms): a scalar that reads every element."""
    total: Any = 0.0
    for k, t in enumerate(tensors):
        if t is None or not t.requires_grad:
            continue
        w = fg.tensor(np.cos(0.7 * np.arange(t.data.size).reshape(t.data.shape) + k + seed))
        term = t * w
        total = total + (term.real if t.dtype.kind == "c" else term).sum()
    return total


def _change(t: fg.Tensor) -> None:
    """A change of ``t``'s values in place that keeps integer indices in range and masks boolean."""
    with fg.no_grad():
        if t.dtype.kind in "fc":
            t.mul_(1.25)
        elif t.dtype.kind == "b":
            t.copy_(fg.tensor(~t.data))
        elif t.data.size > 1:
            t.copy_(fg.tensor(np.roll(t.data, 1)))
        else:
            t.copy_(fg.tensor(np.zeros_like(t.data) if t.data.item() else np.ones_like(t.data)))


def _run(record: Recording) -> tuple[tuple[Any, ...], list[Any]] | None:
    """The recorded call run: its inputs followed by its integer results (which a test may change too), and its
    differentiable outputs; None when it has none."""
    fn, inputs = record()
    out = fn(*inputs)
    outs = _outputs(out)
    return (inputs + tuple(_integer_outputs(out)), outs) if outs else None


def _first(record: Recording, changed: int | None, create_graph: bool) -> list[Any] | None:
    """The gradient of a weighted sum of the outputs, argument ``changed`` changed in place after the forward
    (past the arguments: an integer result)."""
    ran = _run(record)
    if ran is None:
        return None
    inputs, outs = ran
    loss = _weighted_sum(outs, 1.0)
    if changed is not None:
        _change(inputs[changed])
    leaves = [t for t in inputs if isinstance(t, fg.Tensor) and t.requires_grad]
    return [None if g is None else g.data for g in fg.autograd.grad(loss, leaves, allow_unused=True,
                                                                     create_graph=create_graph)]


def _second(record: Recording, changed: int | None) -> list[Any] | None:
    """The gradient of <u, grad_x <v, f(x)>> in the inputs and v, argument ``changed`` changed in place between
    the first backward (create_graph) and the second: v's gradient only reaches the graph the rules recorded.
    ``changed`` past the arguments names a result that needs no gradient (max_pool's indices)."""
    ran = _run(record)
    if ran is None:
        return None
    inputs, outs = ran
    vs = [fg.tensor(np.sin(np.arange(o.data.size).reshape(o.data.shape) + 0.3), requires_grad=True) for o in outs]
    loss = sum(((o * v).real if o.dtype.kind == "c" else o * v).sum() for o, v in zip(outs, vs))
    leaves = [t for t in inputs if isinstance(t, fg.Tensor) and t.requires_grad]
    first = _weighted_sum(list(fg.autograd.grad(loss, leaves, allow_unused=True, create_graph=True)), 3.0)
    if not isinstance(first, fg.Tensor) or not first.requires_grad:
        return None
    if changed is not None:
        _change(inputs[changed])
    return [None if g is None else g.data for g in fg.autograd.grad(first, leaves + vs, allow_unused=True)]


def _integer_outputs(out: Any) -> list[fg.Tensor]:
    """The results that are integer Tensors (indices), which a rule may read."""
    results = out if isinstance(out, tuple | list) else (out,)
    return [o for o in results if isinstance(o, fg.Tensor) and o.dtype.kind in "iu"]


def _same(a: list[Any], b: list[Any]) -> bool:
    return all((x is None) == (y is None) and (x is None or np.allclose(x, y, equal_nan=True)) for x, y in zip(a, b))


def _check(record: Recording, gradient: Callable[[Recording, int | None], list[Any] | None]) -> None:
    """Each Tensor argument changed in place: torch's error, or the gradient of the unchanged recording."""
    expected = gradient(record, None)
    if expected is None:
        return
    fn, inputs = record()
    for k, t in enumerate(inputs + tuple(_integer_outputs(fn(*inputs)))):
        if not isinstance(t, fg.Tensor):
            continue
        try:
            got = gradient(record, k)
        except RuntimeError as e:
            assert CHANGED in str(e), f"argument {k} changed in place: {e}"
            continue
        assert got is not None and _same(got, expected), \
            f"argument {k} changed in place after the forward: a different gradient and no error"


DIFFERENTIABLE = sorted(name for name in SAMPLES if OPS[name].differentiable)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_changing_an_argument_after_the_forward_raises_or_keeps_the_gradient(name: str) -> None:
    for case in SAMPLES[name]:
        record: Recording = lambda case=case: call(name, case)  # noqa: E731
        _check(record, lambda r, k: _first(r, k, False))
        _check(record, lambda r, k: _first(r, k, True))


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_changing_an_argument_between_the_backwards_raises_or_keeps_the_second_derivative(name: str) -> None:
    for case in SAMPLES[name]:
        _check(lambda case=case: call(name, case), _second)


@pytest.mark.parametrize("entry", list(NUMPY_SAMPLES), ids=_name)
def test_numpy_entry_points_raise_or_keep_the_gradient(entry: Any) -> None:
    for case in NUMPY_SAMPLES[entry]:
        record: Recording = lambda case=case: call_with(_callable(entry), case)  # noqa: E731
        _check(record, lambda r, k: _first(r, k, False))
        _check(record, _second)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_changing_the_output_in_place_raises_or_keeps_the_gradient(name: str) -> None:
    """out.add_(c) on a result that is no view: the op's rule may have saved out (exp, sqrt...)."""
    for case in SAMPLES[name]:
        fn, inputs = call(name, case)
        leaves = [t for t in inputs if isinstance(t, fg.Tensor) and t.requires_grad]
        outs = _outputs(fn(*inputs))
        if not outs or outs[0]._base is not None:  # a view of a leaf: in place is refused (as torch)
            continue
        expected = [g.data for g in fg.autograd.grad(_weighted_sum(outs, 1.0), leaves, allow_unused=True)
                    if g is not None]
        fn, inputs = call(name, case)
        leaves = [t for t in inputs if isinstance(t, fg.Tensor) and t.requires_grad]
        outs = _outputs(fn(*inputs))
        outs[0].add_(1.0)  # recorded: its gradient is the identity
        try:
            got = [g.data for g in fg.autograd.grad(_weighted_sum(outs, 1.0), leaves, allow_unused=True)
                   if g is not None]
        except RuntimeError as e:
            assert CHANGED in str(e)
            continue
        assert _same(got, expected), "the output changed in place: a different gradient and no error"


def _aliases(fn: Any, inputs: tuple[Any, ...]) -> list[str]:
    """The results that share memory with a Tensor argument but not its version counter (so not its views)."""
    out = fn(*inputs)
    found = []
    for k, o in enumerate(out if isinstance(out, tuple | list) else (out,)):
        for j, t in enumerate(inputs):
            if (isinstance(o, fg.Tensor) and isinstance(t, fg.Tensor) and np.may_share_memory(o.data, t.data)
                    and o._version_counter is not t._version_counter):
                found.append(f"result {k} shares the memory of argument {j}")
    return found


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_result_sharing_an_arguments_memory_is_its_view(name: str) -> None:
    """Else an in-place change of one reaches the other unseen (einsum('ii->i', a) and sum_to(x, x.shape) did)."""
    for case in SAMPLES[name]:
        fn, inputs = call(name, case)
        assert not _aliases(fn, inputs)
        with fg.no_grad():
            assert not _aliases(fn, inputs)


@pytest.mark.parametrize("entry", list(NUMPY_SAMPLES), ids=_name)
def test_a_numpy_result_sharing_an_arguments_memory_is_its_view(entry: Any) -> None:
    for case in NUMPY_SAMPLES[entry]:
        assert not _aliases(*call_with(_callable(entry), case))


def _as_tensors(value: Any) -> Any:
    """A number as a 0-d Tensor, a tuple of ints as a tuple of them (torch reads such arguments at the call)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return fg.tensor(value)
    if isinstance(value, tuple) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(fg.tensor(v) for v in value)
    return None


def _with_tensor_argument(name: str, case: S, position: int) -> tuple[Any, tuple[Any, ...], list[fg.Tensor]] | None:
    """The op's call on the sample with argument ``position`` (no tensor input) given as Tensors, its leaves and
    those Tensors; None when the argument is of no such kind."""
    spec = OPS[name]
    args = list(spec.bind(tuple(case.args), dict(case.kwargs)))
    given = _as_tensors(args[position])
    if given is None:
        return None
    fn, leaves = call(name, S(*args[:position], *args[position + 1:]))
    tensors = list(given) if isinstance(given, tuple) else [given]

    def with_it(*inputs: Any) -> Any:
        return getattr(fg.ops, name)(*inputs[:position], given, *inputs[position:])

    return with_it, leaves, tensors


def _gradient_with_tensor_argument(name: str, case: S, position: int, change: bool) -> list[Any] | None:
    """The gradient of the op's call with argument ``position`` given as Tensors (changed in place after the
    forward if ``change``); None when the argument is of no such kind or the op does not take Tensors there."""
    made = _with_tensor_argument(name, case, position)
    if made is None:
        return None
    with_it, leaves, tensors = made
    try:
        outs = _outputs(with_it(*leaves))
    except (TypeError, ValueError, RuntimeError):
        return None  # the op does not take a Tensor there
    if not outs:
        return None
    loss = _weighted_sum(outs, 1.0)
    if change:
        for t in tensors:
            _change(t)
    return [g.data for g in fg.autograd.grad(loss, [t for t in leaves if isinstance(t, fg.Tensor) and t.requires_grad])]


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_a_number_given_as_a_tensor_and_changed_after_the_forward_raises_or_keeps_the_gradient(name: str) -> None:
    """``fg.diagonal(x, offset=t)`` with a 0-d Tensor ``t`` (torch takes one), then ``t.add_(1)``: torch's error or
    the gradient of the forward's offset, never the gradient of another diagonal."""
    spec = OPS[name]
    for case in SAMPLES[name]:
        if spec.sequence:
            continue
        for position in range(len(spec.params)):
            if position in spec.tensor_positions:
                continue
            try:
                expected = _gradient_with_tensor_argument(name, case, position, False)
            except (TypeError, ValueError, RuntimeError):
                continue  # a backward that does not take a Tensor there either: an error, never a silent one
            if expected is None:
                continue
            try:
                got = _gradient_with_tensor_argument(name, case, position, True)
            except RuntimeError as e:
                assert CHANGED in str(e), f"{spec.params[position]} given as a Tensor changed in place: {e}"
                continue
            assert got is not None and _same(got, expected), \
                f"{spec.params[position]} given as a Tensor changed in place: a different gradient and no error"
