"""Anomaly detection: forward tracebacks on errors in backward (also double backward), the NaN check, the
forward NaN/Inf check, in-place change notes, thread-locality, and no cost when off."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.autograd import Function
from funcgrad.autograd.anomaly_mode import (
    detect_anomaly,
    inplace_hint,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    record_inplace,
    set_detect_anomaly,
)
from funcgrad.autograd.profiler import profile
from funcgrad.core.dispatch import DISPATCH

pytestmark = [pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]  # NumPy's, for the NaN and Inf made on purpose


class MyFunc(Function):
    """The seeds' example: a custom Function whose backward fails."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        raise ValueError("boom in MyFunc.backward")


class Twice(Function):
    """Its backward is itself a Function (Failing) that fails when differentiated."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return Failing.apply(g * x)


class Failing(Function):
    @staticmethod
    def forward(ctx, g):
        return g * 2

    @staticmethod
    def backward(ctx, gg):
        raise ValueError("boom in double backward")


def notes(error: BaseException) -> str:
    return "\n".join(getattr(error, "__notes__", []))


def line_after() -> int:
    """The number of the caller's next line."""
    return sys._getframe(1).f_lineno + 1


def test_error_in_custom_backward_shows_the_forward_traceback() -> None:
    x = fg.ones(3, requires_grad=True)
    with detect_anomaly():
        line = line_after()
        y = MyFunc.apply(x)
        with pytest.raises(ValueError, match="boom in MyFunc.backward") as info:
            y.sum().backward()
    report = notes(info.value)
    assert report.startswith("Error detected in MyFuncBackward. Traceback of forward call that caused the error:")
    assert f'File "{__file__}", line {line}, in test_error_in_custom_backward' in report
    assert "y = MyFunc.apply(x)" in report
    assert "funcgrad/autograd" not in report.splitlines()[-2]  # ends at the user's line, not inside funcgrad


def test_every_node_records_its_forward_traceback_as_torch() -> None:
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        line = line_after()
        y = (x * 2).exp()
    for node in (y.grad_fn, y.grad_fn.next_functions[0][0]):
        stack = node.metadata["traceback_"]
        assert isinstance(stack, list) and f"line {line}" in stack[-1] and "y = (x * 2).exp()" in stack[-1]


def test_double_backward_names_the_parent_node_and_its_traceback() -> None:
    x = fg.ones(3, requires_grad=True)
    with detect_anomaly():
        y_line = line_after()
        y = Twice.apply(x)
        grad_line = line_after()
        (g,) = fg.autograd.grad(y.sum(), x, create_graph=True)
        assert g.grad_fn.metadata["parent_"] is y.grad_fn
        with pytest.raises(ValueError, match="boom in double backward") as info:
            g.sum().backward()
    first, previous = notes(info.value).split("Previous calculation was induced by TwiceBackward.")
    assert first.startswith("Error detected in FailingBackward.")
    assert f"line {grad_line}" in first and "return Failing.apply(g * x)" in first  # created inside backward
    assert previous.startswith(" Traceback of forward call that induced the previous calculation:")
    assert f"line {y_line}" in previous


def test_error_in_a_table_rule_names_the_node() -> None:
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        a = x * 1
        line = line_after()
        b = a * a
        a.add_(1)  # a saved input of MulBackward0 changes: its backward fails
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            b.sum().backward()
    report = notes(info.value)
    assert report.startswith("Error detected in MulBackward0.") and f"line {line}" in report


def test_node_created_before_anomaly_mode_has_no_forward_information() -> None:
    x = fg.ones(3, requires_grad=True)
    y = MyFunc.apply(x)
    with detect_anomaly(), pytest.raises(ValueError) as info:
        y.sum().backward()
    assert notes(info.value) == ("Error detected in MyFuncBackward. No forward pass information available. "
                                 "Enable detect anomaly during forward pass for more information.")


def test_nan_in_backward_names_the_node() -> None:
    x = fg.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        line = line_after()
        y = fg.sqrt(x) * 0
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    assert str(info.value) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert f"line {line}" in notes(info.value)


def test_check_nan_off_lets_nan_through() -> None:
    x = fg.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly(check_nan=False):
        assert not is_anomaly_check_nan_enabled()
        (fg.sqrt(x) * 0).sum().backward()
    assert np.isnan(x.grad.data[0])


def test_forward_check_names_the_op_line_and_input_statistics() -> None:
    x = fg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    with detect_anomaly(check_forward=True):
        y = x * 1
        with pytest.raises(RuntimeError) as info:
            line = line_after()
            fg.log(y)
    message = str(info.value)
    assert message.startswith("Function 'log' returned 1 nan and 0 inf values in its 0th output (of shape [3]) "
                              "from finite inputs.")
    assert f'File "{__file__}", line {line}' in message and "fg.log(y)" in message
    assert "x: float64 of shape [3], min -2, max 3, 0 non-finite" in message


def test_forward_check_reports_inf_and_every_input() -> None:
    with detect_anomaly(check_forward=True), pytest.raises(RuntimeError) as info:
        fg.div(fg.tensor([1.0, 2.0]), fg.tensor([0.0, 4.0]))
    message = str(info.value)
    assert "returned 0 nan and 1 inf values" in message
    assert "  x: float64 of shape [2], min 1, max 2, 0 non-finite" in message
    assert "  y: float64 of shape [2], min 0, max 4, 0 non-finite" in message


def test_forward_check_ignores_non_finite_inputs_and_is_off_by_default() -> None:
    with detect_anomaly(check_forward=True):
        fg.exp(fg.tensor([np.inf, 1.0])) * 0  # inf in, nan out: not the op's fault
    with detect_anomaly():
        fg.log(fg.tensor([-1.0]))


def test_forward_check_skips_ops_run_by_backward_rules() -> None:
    x = fg.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly(check_nan=False, check_forward=True):
        (fg.sqrt(x) * 0).sum().backward(create_graph=True)  # the rule's g / (2 * out) divides by 0


def test_inplace_hint_names_the_changes_since_the_saved_version() -> None:
    x = fg.tensor([1.0])
    with detect_anomaly():
        record_inplace(x, "mul")
        x._version_counter[0] += 1
        line = line_after()
        record_inplace(x, "add")
        hint = inplace_hint(x._version_counter, 1)
    assert "mul_" not in hint
    assert hint.startswith("\nAnomaly mode saw it changed in place since it was saved, by:\nadd_ (version 1 -> 2) at")
    assert f"line {line}" in hint
    assert inplace_hint(fg.tensor([1.0])._version_counter, 0) == ""
    assert inplace_hint(x._version_counter, 1) == ""  # forgotten when the mode is off


def test_version_error_names_the_inplace_op_in_anomaly_mode() -> None:
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        y = x.sigmoid()
        line = line_after()
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            y.sum().backward()
    assert "mul_ (version 0 -> 1) at" in str(info.value) and f"line {line}" in str(info.value)


def test_modes_switch_and_restore() -> None:
    assert not is_anomaly_enabled()
    with set_detect_anomaly(True):
        assert is_anomaly_enabled()
        with set_detect_anomaly(False):
            assert not is_anomaly_enabled()
        assert is_anomaly_enabled()
    set_detect_anomaly(True)
    try:
        assert is_anomaly_enabled()
    finally:
        set_detect_anomaly(False)
    assert not is_anomaly_enabled()


def test_detect_anomaly_as_decorator_and_warning() -> None:
    @detect_anomaly()
    def inside() -> bool:
        return is_anomaly_enabled()

    assert inside() and inside()
    assert not is_anomaly_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        detect_anomaly()


def test_off_installs_nothing_and_records_nothing() -> None:
    with detect_anomaly():
        assert DISPATCH.active
    assert not DISPATCH.active and DISPATCH.layers == []
    y = fg.tensor([1.0], requires_grad=True) * 2
    assert y.grad_fn._hooks is None  # not even a metadata dict was made


def test_mode_is_per_thread() -> None:
    seen = {}

    def other() -> None:
        seen["enabled"] = is_anomaly_enabled()
        seen["metadata"] = dict((fg.tensor([1.0], requires_grad=True) * 2).grad_fn.metadata)

    with detect_anomaly():
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
    assert seen == {"enabled": False, "metadata": {}}


def test_composes_with_the_profiler() -> None:
    x = fg.ones(3, requires_grad=True)
    with profile() as prof, detect_anomaly():
        y = MyFunc.apply(x * 2)
        with pytest.raises(ValueError) as info:
            y.sum().backward()
    assert "Error detected in MyFuncBackward." in notes(info.value)
    assert {"mul", "MyFuncBackward"} <= {e.key for e in prof.key_averages()}
    assert not DISPATCH.active
