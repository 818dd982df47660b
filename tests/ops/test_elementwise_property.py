"""Hypothesis over the elementwise part of the table: shapes (0-d included), broadcasting pairs and values
inside each op's smooth domain; first and second derivatives and the batched backward for each draw."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.check.properties import assert_grads_close
from funcgrad.check.strategies import arrays, broadcastable_arrays
from funcgrad.ops.registry import OPS
from tests.budget import examples
from tests.ops.samples import DOMAINS


def _inputs(name: str) -> st.SearchStrategy:
    low, high = DOMAINS[name]
    n = len(OPS[name].tensor_positions)
    if n == 1:
        return arrays(min_value=low, max_value=high).map(lambda a: (a,))
    return broadcastable_arrays(n, min_value=low, max_value=high)


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_elementwise_derivatives_on_random_shapes(name: str) -> None:
    @settings(max_examples=examples(6), deadline=None)
    @given(xs=_inputs(name))
    def check(xs: tuple) -> None:
        assert_grads_close(getattr(fg, name), *xs, order=2, check_batched_grad=True)

    check()
