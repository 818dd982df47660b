"""The size of nested ``create_graph`` graphs: how many nodes the k-th derivative records.

Each nested ``grad(g.sum(), x, create_graph=True)`` differentiates the graph the previous one recorded,
so every op a backward rule records is paid again, multiplied, at every further order. The counts
below are pinned (orders 1 to 6) so a rule that starts recording more than it needs shows here; the
torch column they were compared with (torch 2.13, walking ``grad_fn.next_functions``) is in the
comments. Lower is fine: update the pin when a rule gets leaner.
"""
from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from benchmarks.per_op_profile import graph_bytes_per_op
from funcgrad import autograd
from funcgrad.ops import formulas as R


def graph_size(t: fg.Tensor) -> int:
    """The number of nodes reachable from ``t.grad_fn`` (AccumulateGrad included), as torch counts them."""
    seen: set[Any] = set()
    stack = [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(nxt for nxt, _ in node.next_functions)
    return len(seen)


def nested_sizes(f: Callable[[fg.Tensor], fg.Tensor], orders: int) -> list[int]:
    """Graph sizes of the 1st..``orders``-th derivative of the elementwise ``f``."""
    x = fg.tensor(np.linspace(-0.9, 0.9, 7), requires_grad=True)
    g = f(x)
    sizes = []
    for _ in range(orders):
        (g,) = autograd.grad(g.sum(), x, create_graph=True)
        sizes.append(graph_size(g))
    return sizes


PINNED = {  # function: (counts of orders 1..6, torch's for the same function in the comment)
    # sin's node keeps the cos(x) it records (formulas.Scaled): each order records it no more; a product with the
    # implicit seed costs the next pass no multiplication (formulas.times_conj)
    "exp(sin(x)) * tanh(x)": (lambda x: fg.exp(fg.sin(x)) * fg.tanh(x),
                              [11, 26, 61, 154, 413, 1166]),   # torch: 11, 29, 78, 210, 568, 1552
    "exp(sin(x)) * sin(x)": (lambda x: fg.exp(fg.sin(x)) * fg.sin(x),
                             [12, 28, 60, 136, 328, 860]),    # torch: 12, 32, 84, 218, 564, 1466
    "tanh(x)": (fg.tanh, [3, 5, 11, 25, 61, 159]),             # torch: 3, 6, 14, 34, 84, 212
    "sigmoid(x)": (fg.sigmoid, [3, 6, 13, 29, 68, 170]),       # torch: 3, 6, 14, 34, 83, 207
    "asin(x / 2)": (lambda x: fg.asin(x / 2), [7, 11, 25, 50, 108, 252]),     # torch: 8, 13, 27, 53, 117, 280
    "reciprocal(x + 2)": (lambda x: fg.reciprocal(x + 2), [6, 7, 16, 35, 80, 195]),  # torch: 5, 9, 21, 51, 129, 339
    # div's rule for y reads x and y, not its output (torch's: the output may be written in place)
    "sin(x) / (x + 2)": (lambda x: fg.sin(x) / (x + 2), [10, 29, 95, 342, 1295, 5052]),  # torch: ..., 1428, 5476
}


@pytest.mark.parametrize("name", list(PINNED))
def test_nested_create_graph_records_the_pinned_number_of_nodes(name: str) -> None:
    f, expected = PINNED[name]
    assert nested_sizes(f, 6) == expected


def test_the_pinned_graphs_compute_the_right_derivatives() -> None:
    """The lean rules are still the right ones: the 4th derivative of tanh against its closed form."""
    x = fg.tensor(np.linspace(-0.9, 0.9, 7), requires_grad=True)
    g = fg.tanh(x)
    for _ in range(4):
        (g,) = autograd.grad(g.sum(), x, create_graph=True)
    t = np.tanh(x.data)
    expected = 8 * t * (1 - t ** 2) * (2 - 3 * t ** 2)  # d^4/dx^4 tanh(x), t = tanh(x)
    np.testing.assert_allclose(g.data, expected, rtol=1e-12, atol=1e-12)


def test_an_integer_output_saved_for_backward_comes_back_without_history() -> None:
    """max_pool saves its indices (an int64 output): under create_graph they come back as a plain Tensor."""
    x = fg.tensor(np.random.default_rng(0).standard_normal((1, 1, 4, 4)), requires_grad=True)
    values, _ = fg.ops.max_pool(x, (2, 2), (2, 2), (0, 0), (1, 1), False)
    outputs = values.grad_fn.unpack_saved(True)[0]
    assert outputs[0].requires_grad and outputs[0].dtype == np.float64
    assert not outputs[1].requires_grad and outputs[1].dtype == np.int64


SCALED = {  # functions of ops whose rule is formulas.Scaled (the node keeps f'(x) between create_graph passes)
    "exp(sin(x)) * cos(x)": lambda m, x: m.exp(m.sin(x)) * m.cos(x),
    "sinh(cosh(x / 2))": lambda m, x: m.sinh(m.cosh(x / 2)),
    "asin(x / 2) * acos(x / 3)": lambda m, x: m.asin(x / 2) * m.acos(x / 3),
    "asinh(x) * acosh(x + 2)": lambda m, x: m.asinh(x) * m.acosh(x + 2),
}


@pytest.mark.parametrize("name", list(SCALED))
def test_nested_derivatives_through_kept_local_derivatives_match_taylor_mode(name: str) -> None:
    """Orders 1-5 by nested create_graph, where later passes reuse the f'(x) an earlier one recorded, against
    Taylor mode (``nth_derivative``: an independent path through the table's Taylor rules)."""
    f = SCALED[name]
    x = fg.tensor(np.linspace(-0.9, 0.9, 7), requires_grad=True)
    g = f(fg, x)
    for k in range(1, 6):
        (g,) = autograd.grad(g.sum(), x, create_graph=True)
        expected = fg.func.nth_derivative(lambda t: f(fg, t), k)(x.data)
        np.testing.assert_allclose(g.data, expected, rtol=1e-9, atol=1e-9)


def test_graphs_sharing_a_kept_local_derivative_can_each_be_differentiated_once() -> None:
    """Two create_graph passes through sin's node share the cos(x) it keeps; a backward through the first result
    (retain_graph=False) leaves that shared cos(x) node intact, so the second can still be differentiated (as in
    torch, where each pass records a cos node of its own): both add -sin(x) into x.grad."""
    x = fg.tensor(np.linspace(-0.9, 0.9, 7), requires_grad=True)
    y = fg.sin(x)
    (g1,) = autograd.grad(y.sum(), x, create_graph=True)
    (g2,) = autograd.grad(y.sum(), x, create_graph=True)
    g1.sum().backward()
    g2.sum().backward()
    np.testing.assert_allclose(x.grad.data, -2 * np.sin(x.data), rtol=1e-14)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        g1.sum().backward()  # (the mul node each pass recorded itself is freed, as usual)


def test_a_kept_local_derivative_is_not_reused_after_its_input_changed() -> None:
    """The saved input is checked before the kept derivative is used: an in-place change raises torch's error."""
    x = fg.tensor(np.linspace(-0.9, 0.9, 7), requires_grad=True)
    a = x * 1.0
    y = fg.sin(a)
    autograd.grad(y.sum(), x, create_graph=True)
    with fg.no_grad():
        a.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        autograd.grad(y.sum(), x, create_graph=True)


def test_passes_through_dispatch_layers_compute_the_local_derivative_afresh() -> None:
    """A plain create_graph pass reuses the cos(x) node an earlier one recorded; under a dispatch layer (here
    saved-tensor hooks, which see every op a pass records) the pass records cos(x) itself. Same values."""
    x = fg.tensor(np.linspace(-0.9, 0.9, 7), requires_grad=True)
    y = fg.sin(x)

    def cos_node(g: fg.Tensor) -> Any:  # g = 1 * cos(x): the node of its cos(x)
        (node, _), = [edge for edge in g.grad_fn.next_functions if edge[0] is not None]
        assert node.name() == "CosBackward0"
        return node

    (g1,) = autograd.grad(y.sum(), x, create_graph=True)
    (g2,) = autograd.grad(y.sum(), x, create_graph=True)
    with fg.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        (g3,) = autograd.grad(y.sum(), x, create_graph=True)
    assert cos_node(g2) is cos_node(g1)
    assert cos_node(g3) is not cos_node(g1)
    np.testing.assert_array_equal(g3.data, g1.data)


def test_a_deep_chain_holds_at_most_500_bytes_of_graph_per_op() -> None:
    """Issue 19's memory target: the deep chain's graph (node, edges, saved values, result Tensor and its 4-element
    array, per op) stays under 500 bytes an op (about 265 now)."""
    assert graph_bytes_per_op("deep-chain") <= 500


def test_kept_local_derivatives_make_no_reference_cycles() -> None:
    """A node keeping f'(x) holds it, and f'(x)'s history leads upstream only: with the collector off, every node
    of a third derivative through sin and asin is freed once its result is dropped."""
    gc.disable()
    try:
        x = fg.tensor(np.linspace(-0.9, 0.9, 5), requires_grad=True)
        g = fg.exp(fg.asin(x / 2) * fg.sin(x))
        for _ in range(3):
            (g,) = autograd.grad(g.sum(), x, create_graph=True)
        seen: set[Any] = set()
        stack = [g.grad_fn]
        while stack:
            node = stack.pop()
            if node is not None and node not in seen:
                seen.add(node)
                stack.extend(nxt for nxt, _ in node.next_functions)
        assert sum(getattr(node, "_derivative", None) is not None for node in seen) >= 2
        refs = [weakref.ref(node) for node in seen]
        del g, seen, stack, node
        assert not [ref for ref in refs if ref() is not None]
    finally:
        gc.enable()


def test_a_product_with_the_seed_is_not_multiplied_again_by_the_next_pass() -> None:
    """A create_graph pass through ``y = x * exp(x)`` records products with its seed (sum's rule spreads it), among
    them ``1 * x``. The next pass's rule through that one is ``g * 1`` with a ``g`` that depends on x (it comes
    through exp's rule), which ``times_conj`` gives as ``g`` itself. With a seed of 2, that pass records it."""
    def second_pass_products(seed: float) -> int:
        x = fg.tensor(np.linspace(-0.9, 0.9, 7), requires_grad=True)
        y = x * fg.exp(x)
        (g1,) = autograd.grad(y.sum(), x, grad_outputs=fg.tensor(seed), create_graph=True)
        start = fg.autograd.graph.next_sequence_nr()
        (g2,) = autograd.grad(g1.sum(), x, create_graph=True)
        np.testing.assert_allclose(g2.data, seed * (2 + x.data) * np.exp(x.data), rtol=1e-14)
        stack, seen, products = [g2.grad_fn], set(), 0
        while stack:
            node = stack.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            products += node.sequence_nr > start and node.name() == "MulBackward0"
            stack.extend(nxt for nxt, _ in node.next_functions)
        return products

    assert second_pass_products(2.0) == second_pass_products(1.0) + 1


def test_only_a_constant_single_one_of_the_same_dtype_and_shape_is_skipped() -> None:
    """``times_conj(g, y)`` is ``g * conj(y)``; it gives ``g`` itself only where that changes nothing and loses no
    derivative: not for a ``y`` requiring grad, of another dtype, of a larger shape, or holding other values."""
    g = fg.tensor(np.linspace(1.0, 2.0, 3)) * 1.0
    one = fg.tensor(1.0)
    assert R.times_conj(g, one) is g
    assert R.times_conj(g, fg.broadcast_to(one, (3,))) is g
    for y in (fg.tensor(1.0, requires_grad=True), fg.tensor(np.float32(1.0)), fg.broadcast_to(one, (2, 3)),
              fg.tensor(2.0), fg.ones(3), fg.tensor(1.0 + 0j)):
        out = R.times_conj(g, y)
        assert out is not g
        expected = g.data * np.conj(y.data)
        assert out.shape == expected.shape and out.dtype == expected.dtype
        np.testing.assert_array_equal(out.data, expected)
    x = fg.tensor(np.linspace(-0.9, 0.9, 7), requires_grad=True)
    w = fg.ones(7, requires_grad=True)  # a unit requiring grad: x's gradient w must keep its dependence on w
    (gx,) = autograd.grad((x * w).sum(), x, create_graph=True)
    (gw,) = autograd.grad(gx.sum(), w)
    np.testing.assert_array_equal(gw.data, np.ones(7))
