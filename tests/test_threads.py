"""Autograd from several threads at once: each thread has its own modes (grad mode, dispatch layers,
dual levels, profiler, anomaly mode, jit recordings); what threads share (a leaf's ``.grad``, a jitted
function's cache) stays exact. Every loop is bounded; switches between threads are made frequent so
that a race shows up here rather than in a user's program."""
from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.func as ff
import funcgrad.functional as F
from funcgrad.autograd import forward_ad as fwAD
from funcgrad.autograd.anomaly_mode import detect_anomaly
from funcgrad.autograd.profiler import profile
from funcgrad.core import dispatch, tangents
from funcgrad.core.dispatch import DISPATCH


@pytest.fixture(autouse=True)
def frequent_switches() -> Iterator[None]:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(previous)
    assert not DISPATCH.active and DISPATCH.layers == [], "a layer stayed installed"


def run_threads(*targets: Callable[[], Any]) -> list[Any]:
    """Run each target in its own thread, all released at once; their results, or re-raise the first error."""
    barrier = threading.Barrier(len(targets))
    results: list[Any] = [None] * len(targets)
    errors: list[BaseException] = []

    def run(i: int, target: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[i] = target()
        except BaseException as error:  # noqa: BLE001  (handed to the main thread)
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i, t)) for i, t in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def compiles(f: Callable[..., Any]) -> bool:
    """Whether ``jit(f)`` records ``f`` once and then replays it without running its Python."""
    calls = []

    def counted(x: np.ndarray) -> Any:
        calls.append(1)
        return f(x)

    jitted = ff.jit(counted)
    x = np.linspace(0.1, 1.0, 5)
    for _ in range(3):
        np.testing.assert_allclose(jitted(x), f(x))
    return len(calls) == 1


# ----- shared leaves ----------------------------------------------------------------------------
def test_backward_from_8_threads_into_one_leaf_adds_up_exactly() -> None:
    w = fg.ones(50_000, requires_grad=True)  # large enough that NumPy's additions run without the GIL
    x = np.arange(50_000.0) % 7

    def train() -> None:
        for _ in range(200):
            (w * x).sum().backward()

    run_threads(*[train] * 8)
    np.testing.assert_array_equal(w.grad.numpy(), 1600 * x)


def test_backward_with_create_graph_from_threads_into_one_leaf_adds_up_exactly() -> None:
    w = fg.tensor([1.0, 2.0], requires_grad=True)

    def train() -> None:
        for _ in range(50):
            (w ** 2).sum().backward(create_graph=True)

    run_threads(*[train] * 4)
    np.testing.assert_array_equal(w.grad.detach().numpy(), 200 * 2 * w.detach().numpy())


# ----- forward mode -----------------------------------------------------------------------------
def _f(x: Any) -> Any:
    return fg.sin(x) * x


def _df(x: np.ndarray) -> np.ndarray:
    return np.cos(x) * x + np.sin(x)


def _d2f(x: np.ndarray) -> np.ndarray:
    return 2 * np.cos(x) - x * np.sin(x)


def test_forward_transforms_from_4_threads_at_once() -> None:
    x = np.linspace(0.2, 1.4, 4)
    v = np.array([1.0, -2.0, 0.5, 3.0])

    def jvp() -> None:
        for _ in range(25):
            out, tangent = ff.jvp(_f, (x,), (v,))
            np.testing.assert_allclose(tangent, _df(x) * v)

    def jacfwd() -> None:
        for _ in range(25):
            np.testing.assert_allclose(ff.jacfwd(_f)(x), np.diag(_df(x)))

    def linearize() -> None:
        for _ in range(25):
            _, push = ff.linearize(_f, x)
            np.testing.assert_allclose(push(v), _df(x) * v)

    def hvp() -> None:
        for _ in range(25):
            _, product = F.hvp(lambda t: _f(t).sum(), fg.tensor(x), fg.tensor(v))
            np.testing.assert_allclose(product.numpy(), _d2f(x) * v)

    run_threads(jvp, jacfwd, linearize, hvp)


def test_a_dual_level_belongs_to_its_thread() -> None:
    entered, done = threading.Event(), threading.Event()

    def holds_a_level() -> None:
        with fwAD.dual_level():
            y = fg.exp(fwAD.make_dual(fg.tensor([0.0, 1.0]), fg.tensor([1.0, 1.0])))
            entered.set()
            done.wait(timeout=60)
            np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), np.exp([0.0, 1.0]))

    def works_meanwhile() -> None:
        entered.wait(timeout=60)
        try:
            assert tangents.levels() == [] and not DISPATCH.tensor_gradients
            x = fg.tensor([0.5, 2.0], requires_grad=True)
            (x ** 3).sum().backward()  # on the array path: the other thread's level asks nothing of it
            np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([0.5, 2.0]) ** 2)
            with fwAD.dual_level():  # a level of its own, not "nested" in the other thread's
                out = fwAD.unpack_dual(fg.sin(fwAD.make_dual(fg.tensor(0.3), fg.tensor(2.0))))
                assert out.tangent.item() == pytest.approx(2 * np.cos(0.3))
        finally:
            done.set()

    run_threads(holds_a_level, works_meanwhile)


# ----- profiler and anomaly mode ----------------------------------------------------------------
def test_a_profile_observes_only_the_thread_that_entered_it() -> None:
    entered, done = threading.Event(), threading.Event()
    seen: list[list[str]] = []

    def profiles() -> None:
        with profile() as prof:
            fg.exp(fg.tensor([1.0]))
            entered.set()
            done.wait(timeout=60)
        seen.append([e.name for e in prof.events()])

    def computes() -> None:
        entered.wait(timeout=60)
        try:
            fg.cos(fg.tensor([1.0]))
            assert DISPATCH.layers == []
        finally:
            done.set()

    run_threads(profiles, computes)
    assert seen == [["exp"]]


def test_profiling_in_one_thread_while_another_runs_forward_mode_leaves_the_library_idle() -> None:
    x = np.linspace(0.2, 1.4, 3)

    def profiles() -> None:
        for _ in range(40):
            with profile():
                fg.tanh(fg.tensor(x)).sum()

    def forward_mode() -> None:
        for _ in range(40):
            np.testing.assert_allclose(ff.jacfwd(_f)(x), np.diag(_df(x)))

    run_threads(profiles, forward_mode, profiles, forward_mode)
    assert not DISPATCH.active and DISPATCH.layers == [] and not DISPATCH.tensor_gradients
    assert compiles(lambda t: np.tanh(t) * 2)


def test_a_profile_entered_while_a_layer_is_suspended_leaves_no_layer_behind() -> None:
    with fwAD.dual_level():
        level = tangents.current()
        with dispatch.suspended(level):
            with profile():
                fg.exp(fg.tensor([1.0]))
            assert DISPATCH.layers == []
        assert DISPATCH.layers == [level]
    assert not DISPATCH.active and DISPATCH.layers == []
    assert compiles(lambda t: np.exp(t) + 1)


def test_anomaly_mode_observes_only_the_thread_that_turned_it_on() -> None:
    entered, done = threading.Event(), threading.Event()
    nodes: dict[str, Any] = {}

    def detects() -> None:
        with detect_anomaly():
            nodes["inside"] = (fg.tensor([1.0], requires_grad=True) * 2).grad_fn
            entered.set()
            done.wait(timeout=60)

    def computes() -> None:
        entered.wait(timeout=60)
        try:
            nodes["other"] = (fg.tensor([1.0], requires_grad=True) * 2).grad_fn
        finally:
            done.set()

    with pytest.warns(UserWarning, match="Anomaly Detection"):
        run_threads(detects, computes)
    assert "traceback_" in nodes["inside"].metadata
    assert "traceback_" not in nodes["other"].metadata


# ----- jit ----------------------------------------------------------------------------------------
def test_jit_from_4_threads_with_different_shapes() -> None:
    jitted = ff.jit(ff.grad(lambda w, x: fg.sum(fg.tanh(x @ w) ** 2)))

    def calls(n: int) -> Callable[[], None]:
        def run() -> None:
            rng = np.random.default_rng(n)
            w = rng.standard_normal(3)
            for _ in range(20):
                x = rng.standard_normal((n, 3))
                s = np.tanh(x @ w)
                np.testing.assert_allclose(jitted(w, x), x.T @ (2 * s * (1 - s ** 2)), rtol=1e-12)
        return run

    run_threads(*[calls(n) for n in (1, 2, 5, 8)])
    assert compiles(lambda t: t * 3)


def test_a_thread_that_ends_with_a_layer_installed_does_not_leave_dispatch_on() -> None:
    """A layer pushed and never popped belongs to its thread: once the thread is gone, ops elsewhere take the
    plain path again."""
    assert not DISPATCH.active

    def leave_a_layer_behind() -> None:
        dispatch.push(dispatch.Layer())
        dispatch.push(dispatch.Layer())
        dispatch.pop(DISPATCH.layers[-1])
        assert DISPATCH.active

    thread = threading.Thread(target=leave_a_layer_behind)
    thread.start()
    thread.join()
    del thread
    gc.collect()
    assert not DISPATCH.active
    x = fg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 4.0])
