"""``funcgrad.func.jit``: replays equal plain calls; what a recording cannot reproduce runs plainly."""
from __future__ import annotations

import gc
import tracemalloc
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.functional as F
from funcgrad import func as ff
from funcgrad.autograd import forward_ad as fwAD
from funcgrad.autograd.profiler import profile
from funcgrad.func.compiler.program import Program
from funcgrad.func.compiler.tracing import Recorder
from funcgrad.nn.functional import dropout
from tests.budget import examples


def _objective(A: fg.Tensor) -> Any:
    return lambda x: fg.sum(fg.log1p(fg.exp(A @ x))) + 0.5 * (x @ x)


def _program(jitted: Any) -> Any:
    (program,) = jitted.programs.values()
    return program


def _recorded(jitted: Any) -> bool:
    return not isinstance(_program(jitted), tuple)


def test_replays_equal_the_plain_call_on_new_inputs() -> None:
    rng = np.random.default_rng(0)
    A = fg.tensor(rng.normal(size=(7, 4)))
    f = _objective(A)

    def hvp(x: Any, v: Any) -> Any:
        return F.hvp(f, x, v)[1]

    jitted = ff.jit(hvp)
    for _ in range(3):
        x, v = fg.tensor(rng.normal(size=4)), fg.tensor(rng.normal(size=4))
        got = jitted(x, v)
        assert isinstance(got, fg.Tensor) and not got.requires_grad
        np.testing.assert_allclose(got.numpy(), hvp(x, v).numpy(), rtol=1e-14)
    assert _recorded(jitted) and len(jitted.programs) == 1


def test_analytic_hessian_vector_product() -> None:
    rng = np.random.default_rng(1)
    A = rng.normal(size=(6, 3))
    f = _objective(fg.tensor(A))
    jitted = ff.jit(lambda x, v: F.hvp(f, fg.as_tensor(x), fg.as_tensor(v))[1].numpy())
    for _ in range(2):
        x, v = rng.normal(size=3), rng.normal(size=3)
        s = 1 / (1 + np.exp(-A @ x))
        np.testing.assert_allclose(jitted(x, v), A.T @ (s * (1 - s) * (A @ v)) + v, rtol=1e-12)


def test_unneeded_work_is_dropped() -> None:
    """The hvp needs neither the value nor the gradient itself: 3 of the 4 matrix products remain."""
    A = fg.tensor(np.random.default_rng(2).normal(size=(5, 3)))
    jitted = ff.jit(lambda x, v: F.hvp(_objective(A), x, v)[1])
    jitted(fg.tensor(np.ones(3)), fg.tensor(np.ones(3)))
    assert sum(fn is np.matmul for fn in _program(jitted).program.calls) == 3


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "hessian", "grad"])
def test_func_transforms_compose_with_jit(transform: str) -> None:
    rng = np.random.default_rng(3)
    W = rng.normal(size=(4, 4))

    def f(x: Any) -> Any:
        y = fg.tanh(fg.as_tensor(W) @ x)
        return y.sum() * y[0] if transform in ("hessian", "grad") else y

    plain = getattr(ff, transform)(f)
    jitted = ff.jit(plain)
    for _ in range(2):
        x = rng.normal(size=4)
        np.testing.assert_allclose(jitted(x), plain(x), rtol=1e-13, atol=1e-15)
    assert _recorded(jitted)


def test_signature_changes_record_anew() -> None:
    jitted = ff.jit(lambda x, scale: x * scale)
    np.testing.assert_array_equal(jitted(np.ones(2), 2.0), [2.0, 2.0])
    np.testing.assert_array_equal(jitted(np.ones(3), 2.0), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(jitted(np.ones(3), 3.0), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(jitted(np.ones(3, np.float32), 3.0), np.full(3, 3.0, np.float32))
    assert jitted(np.ones(3, np.float32), 3.0).dtype == np.float32
    np.testing.assert_array_equal(jitted(np.ones((3, 2)).T, 1.0), np.ones((2, 3)))  # other strides
    assert len(jitted.programs) == 5


def test_value_read_into_python_is_guarded() -> None:
    calls = []

    def f(x: np.ndarray) -> np.ndarray:
        calls.append(1)
        return x * 2 if x.sum() > 0 else -x

    jitted = ff.jit(f)
    np.testing.assert_array_equal(jitted(np.array([1.0, 2.0])), [2.0, 4.0])
    np.testing.assert_array_equal(jitted(np.array([3.0, 1.0])), [6.0, 2.0])  # replayed: the guard holds
    assert len(calls) == 1
    with pytest.warns(RuntimeWarning, match="read a value of its inputs"):
        np.testing.assert_array_equal(jitted(np.array([-1.0, -2.0])), [1.0, 2.0])  # the plain call
    assert len(calls) == 2


VALUE_SHAPED_READS = [
    pytest.param(lambda x: fg.ones(x[x > 0].shape[0]) * 2, id="mask-shape-tensor"),
    pytest.param(lambda x: np.ones(x[x > 0].shape[0]) * 2, id="mask-shape"),
    pytest.param(lambda x: len(x[x > 0]), id="mask-len"),
    pytest.param(lambda x: x[x > 0].size * x, id="mask-size"),
    pytest.param(lambda x: np.size(x[x > 0], 0) * x, id="np-size-axis"),
    pytest.param(lambda x: np.shape(np.flatnonzero(x > 0)), id="flatnonzero"),
    pytest.param(lambda x: np.unique(x).shape[0] * x, id="unique"),
    pytest.param(lambda x: np.argwhere(x > 0).shape, id="argwhere"),
    pytest.param(lambda x: x[np.nonzero(x > 0)].shape, id="nonzero-index"),
    pytest.param(lambda x: [v * 2 for v in x[x > 0]], id="iterate-mask"),
    pytest.param(lambda x: (x[x > 0] + 1).reshape(-1, 1).shape, id="derived-from-mask"),
    pytest.param(lambda x: np.repeat(x, (x > 0).astype(int) + 1).shape, id="repeat-by-values"),
    pytest.param(lambda x: np.reshape(x, np.where(x[0] > 0, [3, 1], [1, 3])).shape, id="reshape-to-values"),
]


@pytest.mark.parametrize("f", VALUE_SHAPED_READS)
def test_shapes_that_depend_on_values_are_guarded(f: Any) -> None:
    """Issue 12: a shape (len, size...) that depends on the values, read into Python, must not replay stale."""
    jitted = ff.jit(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for x in ([1.0, -1.0, 2.0], [1.0, 1.0, 2.0], [-1.0, 3.0, -2.0], [5.0, -1.0, 4.0]):
            got, expected = jitted(np.array(x)), f(np.array(x))
            if isinstance(expected, list):
                assert len(got) == len(expected)
                for g, e in zip(got, expected):
                    np.testing.assert_array_equal(g, e)
            else:
                np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def test_masked_work_without_shape_reads_replays() -> None:
    """A boolean mask alone reads nothing into Python: its replays need no guard, whatever the count."""
    calls = []

    def f(x: np.ndarray) -> Any:
        calls.append(1)
        return (x[x > 0] * 2).sum()

    jitted = ff.jit(f)
    for x in ([1.0, -1.0, 2.0], [1.0, 1.0, 2.0], [-1.0, -3.0, -2.0]):
        assert jitted(np.array(x)) == 2 * np.sum(np.maximum(x, 0))
    assert len(calls) == 1 and _recorded(jitted)


def test_escapes_run_plainly_and_say_why() -> None:
    def f(x: np.ndarray) -> np.ndarray:
        return np.asarray(x) * 2  # the value leaves the recording

    jitted = ff.jit(f)
    for x in (np.array([1.0]), np.array([5.0])):
        np.testing.assert_array_equal(jitted(x), 2 * x)
    program = _program(jitted)
    assert program[0] == "not recorded" and "plain ndarray" in program[1]


def test_scipy_kernels_run_plainly() -> None:
    jitted = ff.jit(ff.grad(lambda A: fg.linalg.det(A)))
    rng = np.random.default_rng(4)
    for _ in range(2):
        A = rng.normal(size=(3, 3))
        np.testing.assert_allclose(jitted(A), np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-10)


def test_writing_into_an_input_is_not_recorded() -> None:
    def f(x: np.ndarray) -> np.ndarray:
        x += 1
        return x * 2

    jitted = ff.jit(f)
    x = np.zeros(2)
    np.testing.assert_array_equal(jitted(x), [2.0, 2.0])
    np.testing.assert_array_equal(x, [1.0, 1.0])
    np.testing.assert_array_equal(jitted(x), [4.0, 4.0])  # the plain call again: x changes as it would
    assert "changes its inputs" in _program(jitted)[1]


def test_closed_over_arrays_are_captured_when_recorded() -> None:
    W = np.ones(2)
    jitted = ff.jit(lambda x: x * W)
    jitted(np.ones(2))
    W[:] = 5.0  # as jax.jit: the recording keeps the value it saw
    np.testing.assert_array_equal(jitted(np.full(2, 2.0)), [2.0, 2.0])


def test_captured_arrays_inside_structured_jacobian_seeds() -> None:
    """A vectorized Jacobian scales ``W`` lazily (a structured stack over ``W``): captured like any array."""
    rng = np.random.default_rng(5)
    W0 = rng.normal(size=(3, 3))
    W = W0.copy()
    jitted = ff.jit(lambda x: F.jacobian(lambda t: fg.tanh(fg.as_tensor(W) @ t), fg.as_tensor(x), vectorize=True))
    x = rng.normal(size=3)
    jitted(x)
    assert _recorded(jitted)
    W[:] = 0.0
    np.testing.assert_allclose(jitted(x).numpy(), (1 - np.tanh(W0 @ x) ** 2)[:, None] * W0, rtol=1e-13)


def test_a_draw_from_funcgrads_generators_is_not_replayed() -> None:
    """A dropout mask (funcgrad's generator) must change at every training step: a replay froze the first call's
    mask for the whole loop. Such a function is not recorded; a seeded draw is a constant and records."""
    weights = np.arange(1.0, 9.0)
    jitted = ff.jit(ff.value_and_grad(lambda x: (dropout(x, 0.5) * weights).sum()))
    x = np.linspace(1.0, 2.0, 8)
    masks = set()
    for _ in range(6):
        value, g = jitted(x)
        np.testing.assert_allclose(value, (g * x).sum(), rtol=1e-13)  # the same mask forward and backward
        masks.add(tuple(g != 0))
    assert len(masks) > 1
    assert "drew random numbers" in _program(jitted)[1]
    seeded = ff.jit(lambda x: x * fg.rand(3, seed=0).data)
    np.testing.assert_array_equal(seeded(np.ones(3)), seeded(np.ones(3)))
    assert _recorded(seeded)


def test_arrays_changed_during_the_call_are_captured_at_each_value() -> None:
    def f(x: np.ndarray) -> np.ndarray:
        buffer = np.zeros(2)
        y = x + buffer
        buffer += 1  # plain NumPy, not recorded: the next use must see the new value
        return y * buffer

    jitted = ff.jit(f)
    jitted(np.ones(2))
    np.testing.assert_array_equal(jitted(np.full(2, 3.0)), [3.0, 3.0])
    assert _recorded(jitted)


def test_writing_a_traced_value_into_a_plain_array_is_not_recorded() -> None:
    def f(x: np.ndarray) -> np.ndarray:
        out = np.zeros(2)
        np.add(x, 1, out=out)
        return out

    jitted = ff.jit(f)
    for x in (np.zeros(2), np.ones(2)):
        np.testing.assert_array_equal(jitted(x), x + 1)
    assert "created outside" in _program(jitted)[1]


def test_in_place_work_on_traced_arrays_replays() -> None:
    def f(x: np.ndarray) -> np.ndarray:
        y = x * 1.0
        y[0] = 7.0
        y += x
        view = y[1:]
        view *= 2
        return y

    jitted = ff.jit(f)
    for x in (np.arange(3.0), np.array([5.0, -1.0, 2.0])):
        np.testing.assert_array_equal(jitted(x), f(x))
    assert _recorded(jitted)


def test_outputs_that_do_not_depend_on_inputs_are_fresh_copies() -> None:
    jitted = ff.jit(lambda x: (x + 1, np.zeros(2), 3))
    jitted(np.ones(2))
    first = jitted(np.ones(2))
    first[1][:] = 9.0
    y, zeros, three = jitted(np.ones(2))
    np.testing.assert_array_equal(zeros, [0.0, 0.0])
    assert three == 3


def test_pytrees_in_and_out() -> None:
    jitted = ff.jit(lambda p, scale: {"w": p["w"] * scale, "sum": [p["w"].sum() + p["b"]]})
    for w in (np.ones(2), np.array([2.0, 5.0])):
        out = jitted({"w": w, "b": np.array(1.0)}, 2.0)
        np.testing.assert_array_equal(out["w"], 2.0 * w)
        np.testing.assert_array_equal(out["sum"][0], w.sum() + 1.0)


def test_keyword_arguments() -> None:
    jitted = ff.jit(lambda x, *, scale, shift=0.0: x * scale + shift)
    for x in (np.ones(2), np.full(2, 3.0)):
        np.testing.assert_array_equal(jitted(x, scale=np.array(2.0), shift=1.0), 2 * x + 1)
    assert len(jitted.programs) == 1


def test_same_array_passed_twice() -> None:
    jitted = ff.jit(lambda a, b: a * b)
    x = np.array([2.0, 3.0])
    np.testing.assert_array_equal(jitted(x, x), [4.0, 9.0])
    np.testing.assert_array_equal(jitted(x, np.ones(2)), [2.0, 3.0])
    assert len(jitted.programs) == 2  # which arguments are the same array is part of the signature


def test_leaked_traced_array_raises() -> None:
    kept = []

    def f(x: np.ndarray) -> np.ndarray:
        kept.append(x * 1)
        return x

    ff.jit(f)(np.ones(2))
    with pytest.raises(RuntimeError, match="used after the call returned"):
        kept[0] + 1


def test_bad_arguments_raise_clearly() -> None:
    jitted = ff.jit(lambda x: x)
    with pytest.raises(TypeError, match="requires grad"):
        jitted(fg.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="neither an array nor hashable"):
        jitted({1.0, 2.0})


def test_errors_of_the_function_are_its_own() -> None:
    def f(x: np.ndarray) -> np.ndarray:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        ff.jit(f)(np.ones(2))


def test_runs_plainly_under_dispatch_layers_and_nested() -> None:
    f = ff.grad(lambda x: (fg.as_tensor(x) ** 3).sum())
    jitted = ff.jit(f)
    with profile():
        np.testing.assert_array_equal(jitted(np.ones(2)), [3.0, 3.0])
    assert not jitted.programs
    with fwAD.dual_level():
        np.testing.assert_array_equal(jitted(np.ones(2)), [3.0, 3.0])
    outer = ff.jit(lambda x: jitted(x) * 2)
    for x in (np.ones(2), np.full(2, 2.0)):
        np.testing.assert_array_equal(outer(x), 6 * x ** 2)
    assert not jitted.programs and _recorded(outer)


def test_replay_errors_fall_back_to_the_plain_call() -> None:
    def f(x: np.ndarray) -> np.ndarray:
        try:
            return np.linalg.inv(x) @ x  # replays fine while x is invertible
        except np.linalg.LinAlgError:
            return np.zeros_like(x)

    jitted = ff.jit(f)
    jitted(np.eye(2))
    with pytest.warns(RuntimeWarning, match="replay raised"):
        np.testing.assert_array_equal(jitted(np.zeros((2, 2))), np.zeros((2, 2)))


def test_errors_caught_while_recording_are_guarded() -> None:
    def f(x: np.ndarray) -> np.ndarray:
        try:
            return np.linalg.inv(x) @ x
        except np.linalg.LinAlgError:
            return np.zeros_like(x)

    jitted = ff.jit(f)
    np.testing.assert_array_equal(jitted(np.zeros((2, 2))), np.zeros((2, 2)))  # recorded on the except path
    np.testing.assert_array_equal(jitted(np.ones((2, 2))), np.zeros((2, 2)))   # replayed: inv raises again
    assert _recorded(jitted)
    with pytest.warns(RuntimeWarning, match="when recorded, it raised LinAlgError"):
        np.testing.assert_allclose(jitted(2 * np.eye(2)), np.eye(2))           # inv works: the plain call


def test_program_is_only_numpy() -> None:
    with Recorder([np.ones(2)]) as recorder:
        (x,) = recorder.inputs
        y = np.exp(x) + x.sum()
    program = recorder.program([y])
    assert isinstance(program, Program) and len(program.calls) == 3
    np.testing.assert_allclose(program.run([np.zeros(2)])[0], [1.0, 1.0])


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.sampled_from(["exp", "tanh", "square", "sin", "mul", "add", "sum", "matmul"]), min_size=1,
                max_size=6),
       st.integers(1, 4), st.integers(0, 2 ** 16))
def test_random_programs_replay_their_gradients_and_hvps(ops: list[str], n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    W = fg.tensor(rng.normal(size=(n, n)) / n)

    def f(x: Any) -> Any:
        y = x
        for op in ops:  # each step squashed by tanh: nested exp/square stay finite (|y| < 1 after a step)
            y = fg.tanh({"mul": lambda t: t * x, "add": lambda t: t + x, "sum": lambda t: t.sum() * x,
                         "matmul": lambda t: W @ t}.get(op, getattr(fg, op, None))(y))
        return (y * y).sum()

    def derivatives(x: Any, v: Any) -> Any:
        return ff.grad(f)(x), ff.jvp(ff.grad(f), (x,), (v,))[1]

    jitted = ff.jit(derivatives)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback expected
        for _ in range(2):
            x, v = rng.uniform(-1, 1, size=n), rng.normal(size=n)
            for got, expected in zip(jitted(x, v), derivatives(x, v)):
                np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert _recorded(jitted)


def test_a_recorded_array_on_the_left_of_a_tensor_keeps_the_graph() -> None:
    """``x @ w`` with ``x`` a plain (recorded) array and ``w`` the differentiated Tensor: the Tensor's
    reflected operator runs, so the very first (recording) call already returns the true gradient."""
    jitted = ff.jit(ff.grad(lambda w, x: fg.sum(fg.tanh(x @ w) ** 2)))
    rng = np.random.default_rng(0)
    w = rng.normal(size=3)
    for n in (1, 2, 2):
        x = rng.normal(size=(n, 3))
        s = np.tanh(x @ w)
        np.testing.assert_allclose(jitted(w, x), x.T @ (2 * s * (1 - s ** 2)), rtol=1e-12)
    assert not any(isinstance(program, tuple) for program in jitted.programs.values())  # both recorded


# ----- a bounded cache ------------------------------------------------------------------------------
def test_the_cache_keeps_the_most_recently_called_signatures() -> None:
    calls: list[int] = []

    def f(x: np.ndarray) -> np.ndarray:
        calls.append(len(x))
        return x * 2

    jitted = ff.jit(f, cache_size=3)
    for n in (1, 2, 3, 1, 4):  # 1 is called again before 4 arrives, so 2 is the one dropped
        np.testing.assert_array_equal(jitted(np.ones(n)), np.full(n, 2.0))
    assert len(jitted.programs) == 3 and calls == [1, 2, 3, 4]
    jitted(np.ones(1))
    jitted(np.ones(3))
    assert calls == [1, 2, 3, 4]  # replayed
    jitted(np.ones(2))
    assert calls == [1, 2, 3, 4, 2]  # recorded anew
    jitted.clear_cache()
    assert not jitted.programs
    jitted(np.ones(1))
    assert calls[-1] == 1
    with pytest.raises(ValueError, match="cache_size"):
        ff.jit(f, cache_size=0)


def test_captured_arrays_are_shared_by_every_signature() -> None:
    """A jitted gradient closing over an 8 MB array, called with 20 batch sizes, keeps one copy of it."""
    W = np.random.default_rng(0).normal(size=(1000, 1000)) / 1000
    jitted = ff.jit(ff.grad(lambda w, x: fg.sum(fg.tanh(x @ fg.tensor(W) @ w))))
    w = np.full(1000, 1e-3)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(1, 21):
            jitted(w, np.full((n, 1000), 1e-2))
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(jitted.programs) == 20
    assert retained < 2 * W.nbytes, f"{retained / 1e6:.0f} MB retained"
    x = np.full((3, 1000), 1e-2)
    s = np.tanh(x @ W @ w)
    np.testing.assert_allclose(jitted(w, x), W.T @ x.T @ (1 - s ** 2), rtol=1e-10)


def test_a_call_that_raises_runs_the_function_once() -> None:
    calls: list[int] = []

    def bad(x: np.ndarray) -> np.ndarray:
        calls.append(1)
        raise ValueError("bad input")

    def mismatched(x: np.ndarray) -> np.ndarray:
        calls.append(1)
        return x @ np.ones(len(x) + 1)

    for f, error in ((bad, "bad input"), (mismatched, "mismatch")):
        calls.clear()
        with pytest.raises(ValueError, match=error):
            ff.jit(f)(np.ones(3))
        assert calls == [1]
