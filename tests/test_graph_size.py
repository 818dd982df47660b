"""The size of nested ``create_graph`` graphs: how many nodes the k-th derivative records.

Each nested ``grad(g.sum(), x, create_graph=True)`` differentiates the graph the previous one recorded,
so every op a backward rule records is paid again, multiplied, at every further order. The counts
below are pinned (orders 1 to 6) so a rule that starts recording more than it needs shows here; the
torch column they were compared with (torch 2.13, walking ``grad_fn.next_functions``) is in the
comments. Lower is fine: update the pin when a rule gets leaner.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import autograd


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
    "exp(sin(x)) * tanh(x)": (lambda x: fg.exp(fg.sin(x)) * fg.tanh(x),
                              [11, 29, 78, 210, 568, 1552]),   # torch: the same
    "exp(sin(x)) * sin(x)": (lambda x: fg.exp(fg.sin(x)) * fg.sin(x),
                             [12, 32, 84, 218, 564, 1466]),    # torch: the same
    "tanh(x)": (fg.tanh, [3, 5, 12, 30, 76, 196]),             # torch: 3, 6, 14, 34, 84, 212
    "sigmoid(x)": (fg.sigmoid, [3, 6, 14, 34, 83, 207]),       # torch: the same
    "asin(x / 2)": (lambda x: fg.asin(x / 2), [7, 11, 25, 50, 108, 252]),     # torch: 8, 13, 27, 53, 117, 280
    "reciprocal(x + 2)": (lambda x: fg.reciprocal(x + 2), [6, 7, 16, 37, 88, 217]),  # torch: 5, 9, 21, 51, 129, 339
    "sin(x) / (x + 2)": (lambda x: fg.sin(x) / (x + 2), [10, 28, 85, 259, 781, 2335]),  # torch: ..., 1428, 5476
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
