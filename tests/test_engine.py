"""The backward engine: accumulation, retain_graph, higher derivatives, inputs=, pruning, summation
over shared inputs, deep graphs and the release of saved memory."""
from __future__ import annotations

import gc
import math
import sys
import weakref
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad import autograd
from funcgrad.core.graph import SHAPES
from tests.budget import examples


def leaf(*values: float) -> fg.Tensor:
    return fg.tensor(list(values), requires_grad=True)


def scalar(value: float) -> fg.Tensor:
    return fg.tensor(value, requires_grad=True)


# ----- accumulation and retain_graph -------------------------------------------------------------
def test_gradients_accumulate_across_backward_calls() -> None:
    x = leaf(1.0, 2.0)
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [5.0, 7.0])
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 3.0])


def test_retain_graph_allows_a_second_backward_and_accumulates() -> None:
    x = scalar(2.0)
    y = x ** 3
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 24.0
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    assert x.grad.item() == 24.0  # the failed call added nothing


def test_grad_does_not_touch_dot_grad() -> None:
    x = leaf(1.0, 2.0)
    (g,) = autograd.grad((x * x).sum(), x)
    np.testing.assert_array_equal(g.data, [2.0, 4.0])
    assert x.grad is None


def test_create_graph_retains_the_graph_by_default() -> None:
    x = scalar(1.5)
    y = fg.exp(x)
    (g,) = autograd.grad(y, x, create_graph=True)
    (g2,) = autograd.grad(y, x)  # still usable: create_graph implied retain_graph
    assert g.requires_grad and not g2.requires_grad
    assert g.item() == pytest.approx(math.exp(1.5)) and g2.item() == pytest.approx(math.exp(1.5))


def test_vector_jacobian_product_and_several_outputs() -> None:
    x = leaf(1.0, 2.0, 3.0)
    y, z = x * x, fg.sin(x)
    v, w = fg.tensor([1.0, 0.5, -1.0]), fg.tensor([2.0, 0.0, 1.0])
    (g,) = autograd.grad([y, z], x, grad_outputs=[v, w], retain_graph=True)
    np.testing.assert_allclose(g.data, 2 * x.data * v.data + np.cos(x.data) * w.data)
    autograd.backward([y.sum(), z], [None, w])  # None: the implicit 1 of a scalar output
    np.testing.assert_allclose(x.grad.data, 2 * x.data + np.cos(x.data) * w.data)


# ----- higher derivatives ------------------------------------------------------------------------
def nth_grad(y: fg.Tensor, x: fg.Tensor, n: int) -> fg.Tensor:
    for _ in range(n):
        (y,) = autograd.grad(y, x, create_graph=True)
    return y


@pytest.mark.parametrize(("f", "derivatives"), [
    (fg.sin, [math.cos, lambda v: -math.sin(v), lambda v: -math.cos(v)]),
    (lambda x: x ** 3, [lambda v: 3 * v ** 2, lambda v: 6 * v, lambda v: 6.0]),
    (fg.exp, [math.exp] * 3),
    (lambda x: 1 / x, [lambda v: -v ** -2, lambda v: 2 * v ** -3, lambda v: -6 * v ** -4]),
])
@pytest.mark.parametrize("value", [0.7, -1.3])
def test_first_to_third_derivatives_through_create_graph(f, derivatives, value) -> None:
    x = scalar(value)
    for n, expected in enumerate(derivatives, start=1):
        assert nth_grad(f(x), x, n).item() == pytest.approx(expected(value), rel=1e-12)


def test_mixed_third_derivatives_of_exp_xy() -> None:
    x, y = scalar(1.3), scalar(0.4)
    e = math.exp(1.3 * 0.4)
    (gx,) = autograd.grad(fg.exp(x * y), x, create_graph=True)   # y e^{xy}
    (gxx, gxy) = autograd.grad(gx, [x, y], create_graph=True)  # y^2 e^{xy}, (1 + xy) e^{xy}
    assert gxx.item() == pytest.approx(0.4 ** 2 * e) and gxy.item() == pytest.approx((1 + 1.3 * 0.4) * e)
    (gxxx, gxxy) = autograd.grad(gxx, [x, y])
    assert gxxx.item() == pytest.approx(0.4 ** 3 * e)
    assert gxxy.item() == pytest.approx((2 * 0.4 + 0.4 ** 2 * 1.3) * e)


def test_backward_with_create_graph_gives_a_differentiable_grad() -> None:
    x = scalar(2.0)
    (x ** 3).backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.item() == 12.0
    (g2,) = autograd.grad(x.grad, x)
    assert g2.item() == 12.0


# ----- inputs=, allow_unused, materialize_grads, retain_grad -------------------------------------
def test_backward_inputs_fills_only_those() -> None:
    x, y = leaf(1.0, 2.0), leaf(3.0, 4.0)
    (x * y).sum().backward(inputs=[x])
    np.testing.assert_array_equal(x.grad.data, [3.0, 4.0])
    assert y.grad is None
    (x * y).sum().backward(inputs=y)
    np.testing.assert_array_equal(y.grad.data, [1.0, 2.0])
    np.testing.assert_array_equal(x.grad.data, [3.0, 4.0])


def test_backward_inputs_may_be_a_non_leaf() -> None:
    x = leaf(1.0, 2.0)
    m = x * 3
    (m * m).sum().backward(inputs=[m])
    np.testing.assert_array_equal(m.grad.data, [6.0, 12.0])
    assert x.grad is None


def test_grad_with_respect_to_leaves_and_non_leaves() -> None:
    x = leaf(1.0, 2.0)
    m = x * 3
    gm, gx, gx_again = autograd.grad((m * m).sum(), [m, x, x])
    np.testing.assert_array_equal(gm.data, [6.0, 12.0])
    np.testing.assert_array_equal(gx.data, [18.0, 36.0])
    np.testing.assert_array_equal(gx_again.data, gx.data)


def test_allow_unused_and_materialize_grads() -> None:
    x, unused = leaf(1.0, 2.0), fg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad((x * 2).sum(), [x, unused], retain_graph=True)
    gx, gu = autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gu is None and gx.tolist() == [2.0, 2.0]
    gx, gu = autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)
    assert gu.shape == (1, 3) and gu.tolist() == [[0.0, 0.0, 0.0]] and gx.tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="allow_unused"):
        autograd.grad((x * 2).sum(), [x], materialize_grads=True, allow_unused=False)


def test_retain_grad_on_non_leaf_accumulates() -> None:
    x = leaf(1.0, 2.0)
    m = x * 3
    m.retain_grad()
    y = (m * m).sum()
    y.backward(retain_graph=True)
    np.testing.assert_array_equal(m.grad.data, [6.0, 12.0])
    y.backward()
    np.testing.assert_array_equal(m.grad.data, [12.0, 24.0])
    np.testing.assert_array_equal(x.grad.data, [36.0, 72.0])
    unretained = x * 1
    (unretained * 2).sum().backward()
    assert unretained.grad is None


# ----- summation and pruning ---------------------------------------------------------------------
def test_gradients_sum_over_every_use_of_a_tensor() -> None:
    a = scalar(3.0)
    b = a * 2           # 6
    c = b + b * b       # b + b^2
    d = c * b           # b^2 + b^3, so dd/db = 2b + 3b^2 = 120, dd/da = 240
    d.backward()
    assert a.grad.item() == 240.0


def test_diamond_with_broadcasting_branches() -> None:
    x = leaf(1.0, 2.0)
    col = fg.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
    left, right = x * col, fg.exp(x)         # (3, 2) and (2,)
    (left + right + left * right).sum().backward()
    e = np.exp(x.data)
    np.testing.assert_allclose(x.grad.data, 6 + 3 * e + 6 * (e + x.data * e))
    np.testing.assert_allclose(col.grad.data, (x.data + x.data * e).sum() * np.ones((3, 1)))


def test_a_leaf_used_many_times_gets_the_sum() -> None:
    x = scalar(0.5)
    y = x
    for _ in range(10):
        y = y + x * x
    y.backward()
    assert x.grad.item() == pytest.approx(1 + 10 * 2 * 0.5)


@pytest.mark.parametrize("call", ["grad", "backward"])
def test_only_nodes_leading_to_inputs_run(call: str) -> None:
    x, w = leaf(1.0, 2.0), leaf(3.0, 4.0)
    a, b = x * 2, fg.exp(w)
    ran: list[str] = []
    a.grad_fn.register_prehook(lambda grads: ran.append("mul"))
    b.grad_fn.register_prehook(lambda grads: ran.append("exp"))
    out = (a + b).sum()
    if call == "grad":
        (g,) = autograd.grad(out, x)
        np.testing.assert_array_equal(g.data, [2.0, 2.0])
    else:
        out.backward(inputs=[x])
        np.testing.assert_array_equal(x.grad.data, [2.0, 2.0])
    assert ran == ["mul"]
    assert w.grad is None


# ----- deep graphs and memory --------------------------------------------------------------------
def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def test_a_100000_op_chain_needs_no_recursion() -> None:
    x = leaf(1.0, 2.0, 3.0, 4.0)
    y = x
    for _ in range(50_000):
        y = y * 0.9999 + 0.0001   # two ops per round
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_stack_depth() + 100)  # nothing on the way may recurse per node
    try:
        y.sum().backward()
        del y  # tearing the graph down must not recurse either
    finally:
        sys.setrecursionlimit(limit)
    np.testing.assert_allclose(x.grad.data, np.full(4, 0.9999 ** 50_000))


def test_saved_intermediate_is_freed_right_after_backward() -> None:
    gc.disable()  # the release must not depend on the cycle collector
    try:
        x = fg.tensor(np.linspace(0, 1, 1000), requires_grad=True)
        h = fg.exp(x)
        saved = weakref.ref(h.data)
        out = (h * h).sum()   # saves h (as mul's input) and exp's output
        del h
        assert saved() is not None
        out.backward()
        assert saved() is None
        del out
        np.testing.assert_allclose(x.grad.data, 2 * np.exp(2 * np.linspace(0, 1, 1000)))
    finally:
        gc.enable()


def test_retained_graph_keeps_saved_values_until_the_graph_goes() -> None:
    gc.disable()
    try:
        x = fg.tensor(np.ones(100), requires_grad=True)
        h = fg.sin(x)
        saved = weakref.ref(h.data)
        out = (h * h).sum()
        del h
        out.backward(retain_graph=True)
        assert saved() is not None
        node = weakref.ref(out.grad_fn)
        del out
        assert saved() is None and node() is None
    finally:
        gc.enable()


def test_higher_derivatives_of_a_float32_leaf_through_float64_ops() -> None:
    x = fg.tensor([1.0, 2.0], dtype=np.float32, requires_grad=True)
    y = x * np.ones(2)  # promoted to float64: the gradient is cast back to float32 on the way
    g = nth_grad((y * y * y).sum(), x, 1)
    assert g.dtype == np.float32 and g.requires_grad
    np.testing.assert_array_equal(g.data, [3.0, 12.0])
    (g3,) = autograd.grad(nth_grad(g.sum(), x, 1).sum(), x)
    assert g3.dtype == np.float32
    np.testing.assert_array_equal(g3.data, [6.0, 6.0])
    (x * np.ones(2)).sum().backward(create_graph=True)
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [1.0, 1.0]


def test_the_shared_shapes_stay_bounded_when_every_shape_is_new() -> None:
    """Edges share one tuple per distinct shape; a program meeting ever new shapes does not grow that set
    without bound (a backward pass starts it over), and gradients stay right across the clearing."""
    for n in range(1, 9000):
        x = fg.tensor(np.ones(n), requires_grad=True)
        (x * 2.0).sum().backward()
        assert x.grad is not None and x.grad.data[0] == 2.0
    assert len(SHAPES) <= 4096 + 2


# ----- pruning by inputs=: a property over random programs ------------------------------------------
@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_gradients_for_any_set_of_inputs_equal_those_taken_one_at_a_time(data: st.DataObject) -> None:
    """Leaves and intermediates of a random program, any of them as inputs at once (some unused, some
    reached only through others): each gradient equals the one ``grad`` gives for that input alone."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    values = [leaf(*rng.uniform(0.5, 1.5, 3)) for _ in range(3)]
    ops = [lambda a, b: a * b, lambda a, b: a + b, lambda a, b: fg.sin(a) - b, lambda a, b: fg.exp(a * 0.1) * b]
    for _ in range(data.draw(st.integers(1, 6))):
        i, j = data.draw(st.integers(0, len(values) - 1)), data.draw(st.integers(0, len(values) - 1))
        values.append(ops[data.draw(st.integers(0, len(ops) - 1))](values[i], values[j]))
    out = (values[-1] * values[data.draw(st.integers(0, len(values) - 1))]).sum()
    chosen = data.draw(st.lists(st.integers(0, len(values) - 1), min_size=1, max_size=4))
    inputs = [values[i] for i in chosen]
    together = autograd.grad(out, inputs, retain_graph=True, allow_unused=True)
    other = leaf(1.0) * 2  # a live leaf outside the program: the engine must now search for the inputs' paths
    searched = autograd.grad(out, inputs, retain_graph=True, allow_unused=True)
    del other
    for t, g, h in zip(inputs, together, searched):
        assert (g is None) == (h is None)
        if g is not None:
            np.testing.assert_array_equal(g.data, h.data)
        (alone,) = autograd.grad(out, [t], retain_graph=True, allow_unused=True)
        assert (g is None) == (alone is None)
        if g is not None:
            np.testing.assert_allclose(g.data, alone.data, rtol=1e-12, atol=1e-12)
    assert all(v.grad is None for v in values)  # grad accumulates into nothing


# ----- long recordings and the garbage collector ----------------------------------------------------
def test_long_recording_raises_the_collector_threshold_inside_only() -> None:
    before = gc.get_threshold()
    x = leaf(1.0, 2.0)
    with autograd.graph.long_recording(50_000):
        assert gc.get_threshold() == (50_000, *before[1:])
        y = x
        for _ in range(500):
            y = y * 0.999 + 0.001
        y.sum().backward()
    assert gc.get_threshold() == before
    np.testing.assert_allclose(x.grad.data, [0.999**500] * 2, rtol=1e-12)
    with pytest.raises(RuntimeError, match="inside"), autograd.graph.long_recording():
        raise RuntimeError("inside")
    assert gc.get_threshold() == before  # put back after an error too


def test_a_recording_is_freed_without_the_collector() -> None:
    """No reference cycles: a graph goes when its last Tensor does, with the collector off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        x = leaf(1.0, 2.0)
        y = fg.exp(fg.sin(x) * x) + x
        node = weakref.ref(y.grad_fn)
        z = y.sum()
        del y
        assert node() is not None
        del z
        assert node() is None
    finally:
        if enabled:
            gc.enable()


def test_a_leaf_that_stopped_requiring_grad_gets_no_grad_as_torch() -> None:
    """``y = x * 2; x.requires_grad_(False); y.sum().backward()`` leaves ``x.grad`` None in torch (a parameter frozen
    between the forward and the backward); funcgrad accumulated [2, 2]. Its hooks still run, as torch's."""
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    seen: list[str] = []
    x.register_hook(lambda g: seen.append("hook"))
    x.register_post_accumulate_grad_hook(lambda t: seen.append("post"))
    y = x * 2
    x.requires_grad_(False)
    y.sum().backward()
    assert x.grad is None
    assert seen == ["hook", "post"]


@pytest.mark.parametrize("create_graph", [False, True])
def test_every_stored_grad_is_a_copy_of_its_own(create_graph: bool) -> None:
    """add's rule hands one gradient to both inputs; what ``backward`` stores in ``.grad`` (a leaf's, a retained one,
    ``inputs=`` of a non-leaf) is a copy, as torch's, so an in-place change of one ``.grad`` (clipping, an optimizer
    step) reaches no other. With ``create_graph`` the copy is recorded: the stored gradient can be differentiated."""
    x = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = fg.tensor([4.0, 5.0, 6.0], requires_grad=True)
    a, b = x * 2, w * 3
    a.retain_grad()
    b.retain_grad()
    y = ((a + b) * fg.tensor([1.0, 2.0, 3.0])).sum()
    y.backward(create_graph=create_graph)
    for p, q in ((x, w), (a, b)):
        assert p.grad is not q.grad and not np.shares_memory(p.grad.data, q.grad.data)
        with fg.no_grad():
            p.grad.mul_(0)
        assert np.all(q.grad.data != 0)
    np.testing.assert_array_equal(w.grad.data, [3.0, 6.0, 9.0])
    c = x * x
    d = c * 1.0
    (c + d).sum().backward(inputs=[c, d], create_graph=create_graph)
    assert c.grad is not d.grad and not np.shares_memory(c.grad.data, d.grad.data)
    z = fg.tensor([1.0, 2.0], requires_grad=True)
    (z ** 3).sum().backward(create_graph=create_graph)
    if create_graph:
        (gz,) = fg.autograd.grad(z.grad.sum(), z)
        np.testing.assert_allclose(gz.data, 6 * z.data)


def test_live_sinks_are_counted_exactly_across_threads_and_cycles() -> None:
    """The engine skips its path search when every live sink is a target: the count must be exact. Sinks made and
    dropped in several threads, or freed by the collector from a reference cycle, leave it where it was."""
    import threading

    from funcgrad.core.graph import live_sinks

    gc.collect()
    before = live_sinks()

    def work() -> None:
        for _ in range(200):
            x = fg.tensor([1.0, 2.0], requires_grad=True)
            (x * 2).sum()  # a graph ending at x's AccumulateGrad, dropped at once

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    x = fg.tensor([1.0], requires_grad=True)
    box: list[Any] = [x * 2]
    box.append(box)  # a reference cycle holding the graph
    del x
    assert live_sinks() == before + 1
    del box
    gc.collect()
    assert live_sinks() == before
