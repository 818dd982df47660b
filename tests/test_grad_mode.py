"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode, as context managers, decorators
and (set_grad_enabled) a plain call; each thread has its own mode."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import autograd
from funcgrad.core.dispatch import DISPATCH


def leaf(*values: float) -> fg.Tensor:
    return fg.tensor(list(values), requires_grad=True)


def records() -> bool:
    """Whether an op on a tensor that requires grad records a node right now."""
    y = leaf(1.0) * 2
    assert fg.is_grad_enabled() == y.requires_grad == (y.grad_fn is not None)
    return y.requires_grad


OFF = {
    "no_grad()": lambda: fg.no_grad(),
    "set_grad_enabled(False)": lambda: fg.set_grad_enabled(False),
    "inference_mode()": lambda: fg.inference_mode(),
    "inference_mode(True)": lambda: fg.inference_mode(True),
}


@pytest.mark.parametrize("mode", OFF.values(), ids=OFF.keys())
def test_modes_that_turn_recording_off_as_context_managers(mode) -> None:
    assert records()
    with mode():
        assert not records()
        with fg.enable_grad():
            assert records()
        assert not records()
    assert records()


@pytest.mark.parametrize("mode", OFF.values(), ids=OFF.keys())
def test_modes_as_decorators(mode) -> None:
    @mode()
    def inside(a: int) -> tuple[int, bool]:
        return a + 1, records()

    assert records()  # decorating alone changes nothing
    assert inside(1) == (2, False)
    assert inside.__name__ == "inside"
    assert records()


@pytest.mark.parametrize("mode", [fg.no_grad, fg.inference_mode])
def test_bare_decorators(mode) -> None:
    @mode
    def inside() -> bool:
        return records()

    assert inside() is False and records()

    @fg.enable_grad
    def enabled() -> bool:
        return records()

    with fg.no_grad():
        assert enabled() is True
        assert not records()


def test_enable_grad_decorator_inside_no_grad() -> None:
    @fg.enable_grad()
    def enabled() -> bool:
        return records()

    with fg.no_grad():
        assert enabled() and not records()


def test_set_grad_enabled_as_a_plain_call() -> None:
    try:
        fg.set_grad_enabled(False)
        assert not records()
        fg.set_grad_enabled(True)
        assert records()
    finally:
        fg.set_grad_enabled(True)


@pytest.mark.parametrize("flag", [True, False])
def test_set_grad_enabled_context_restores_the_previous_mode(flag: bool) -> None:
    with fg.no_grad():
        with fg.set_grad_enabled(flag):
            assert records() is flag
        assert not records()
    assert records()


def test_modes_restore_after_an_exception() -> None:
    with pytest.raises(ValueError, match="boom"), fg.no_grad():
        raise ValueError("boom")
    assert records()

    @fg.set_grad_enabled(False)
    def fails() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert records()


def test_inference_mode_flag_and_false_is_a_no_op() -> None:
    assert not autograd.is_inference_mode_enabled()
    with fg.inference_mode():
        assert autograd.is_inference_mode_enabled() and not fg.is_grad_enabled()
    with fg.inference_mode(False):
        assert not autograd.is_inference_mode_enabled() and records()
    assert not autograd.is_inference_mode_enabled()


def test_no_grad_results_are_leaves_and_backward_still_works_inside() -> None:
    x = leaf(1.0, 2.0)
    y = (x * 3).sum()
    with fg.no_grad():
        z = x * 2
        y.backward()  # backward is allowed under no_grad, as torch
    assert z.is_leaf and not z.requires_grad and z.grad_fn is None
    np.testing.assert_array_equal(x.grad.data, [3.0, 3.0])


# ----- threads -----------------------------------------------------------------------------------
def run_in_thread(fn) -> object:
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(fn()))
    thread.start()
    thread.join()
    return result[0]


def test_a_thread_started_inside_no_grad_has_grad_enabled() -> None:
    with fg.no_grad():
        assert run_in_thread(records) is True
        assert not records()


def test_setting_the_mode_in_one_thread_does_not_leak_into_another() -> None:
    ready, checked = threading.Event(), threading.Event()

    def turn_off() -> bool:
        fg.set_grad_enabled(False)  # no restore: only this thread is affected
        ready.set()
        checked.wait(5)
        return fg.is_grad_enabled()

    result: list[bool] = []
    worker = threading.Thread(target=lambda: result.append(turn_off()))
    worker.start()
    assert ready.wait(5)
    assert records()  # the main thread is untouched while the worker has grad off
    checked.set()
    worker.join()
    assert result == [False]

    with fg.no_grad():
        assert run_in_thread(lambda: (fg.set_grad_enabled(True), records())[1]) is True
        assert not records()


# ----- decorated generator functions: every step runs in the mode, the caller's mode holds between ----
@pytest.mark.parametrize("mode", list(OFF.values()) + [lambda: fg.enable_grad()],
                         ids=list(OFF.keys()) + ["enable_grad()"])
def test_a_decorated_generator_runs_every_step_in_the_mode(mode) -> None:
    with mode():
        expected = records()
    outside = fg.no_grad() if expected else fg.enable_grad()  # the caller runs in the other mode

    @mode()
    def steps():
        received = yield records()
        yield received, records()
        try:
            yield records()
        except KeyError:
            yield "thrown", records()

    with outside:
        caller = records()
        gen = steps()
        assert next(gen) is expected and records() is caller
        assert gen.send("sent") == ("sent", expected) and records() is caller
        assert next(gen) is expected
        assert gen.throw(KeyError("k")) == ("thrown", expected) and records() is caller
        gen.close()
        assert records() is caller


def test_a_decorated_generator_returns_its_value_and_closes_inside_the_mode() -> None:
    seen = []

    @fg.no_grad()
    def steps():
        try:
            yield 1
        finally:
            seen.append(records())
        return "done"

    gen = steps()
    next(gen)
    gen.close()
    assert seen == [False] and records()

    @fg.no_grad()
    def finite():
        yield 1
        return "done"

    gen = finite()
    next(gen)
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert stop.value.value == "done"


@pytest.mark.parametrize("mode", ["yes", None, 1, np.bool_(True)])
def test_set_grad_enabled_takes_a_bool_only(mode) -> None:
    with pytest.raises(TypeError, match=r"set_grad_enabled\(\): argument 'mode' \(position 1\) must be bool, not"):
        fg.set_grad_enabled(mode)
    assert records()


# ----- inference tensors: what inference mode computes can never enter a recorded graph's saved state ----
SAVE_ERROR = "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode"
INPLACE_ERROR = "Inplace update to inference tensor outside InferenceMode is not allowed."


def test_what_inference_mode_computes_is_an_inference_tensor() -> None:
    normal = leaf(1.0, 2.0) * 1
    with fg.inference_mode():
        made = fg.ones(3)
        computed = normal * 2
        pieces = fg.split(made, 2)
        view_of_normal = normal[:1]
        with fg.inference_mode(False):
            nested = fg.ones(1)
    assert made.is_inference() and computed.is_inference() and all(p.is_inference() for p in pieces)
    assert nested.is_inference()  # inference_mode(False) changes nothing here
    assert not view_of_normal.is_inference() and not normal.is_inference()
    assert made.detach().is_inference() and not made.clone().is_inference()
    with fg.no_grad():
        assert not fg.ones(1).is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter."):
        assert made._version >= 0


@pytest.mark.parametrize("use", [lambda x, t: x * t, lambda x, t: (x * 1).mul_(t), lambda x, t: fg.exp(x) @ t[:2]])
def test_an_inference_tensor_saved_for_backward_raises(use) -> None:
    x = leaf(1.0, 2.0)
    with fg.inference_mode():
        t = fg.tensor([3.0, 4.0]) * 1
    with pytest.raises(RuntimeError, match=SAVE_ERROR):
        use(x, t)
    assert (x + t).requires_grad  # an op that saves nothing may use it, as torch
    (x * t.clone()).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def test_an_inference_tensor_written_in_place_outside_inference_mode_raises() -> None:
    with fg.inference_mode():
        t = fg.ones(2)
        t.mul_(3)  # inside: allowed
    for mode in (fg.enable_grad(), fg.no_grad()):
        with mode, pytest.raises(RuntimeError, match=INPLACE_ERROR):
            t.add_(1.0)
    with pytest.raises(RuntimeError, match=INPLACE_ERROR):
        t[:1].copy_(leaf(5.0))
    assert t.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor outside InferenceMode"):
        t.requires_grad_()
    with fg.inference_mode():
        u = fg.ones(2, requires_grad=True)  # inside: allowed
    assert u.requires_grad and (u * 2).grad_fn is not None


def test_inference_mode_layer_is_removed_when_the_last_block_closes() -> None:
    assert not DISPATCH.active
    with fg.inference_mode(), fg.inference_mode():
        assert DISPATCH.active
    assert not DISPATCH.active
    with pytest.raises(ValueError), fg.inference_mode():
        raise ValueError
    assert not DISPATCH.active and not fg.ones(1).is_inference()
