"""Hypothesis strategies and assert_grads_close, as a test of funcgrad's own ops would use them."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.check.properties import assert_grads_close
from funcgrad.check.strategies import (
    arrays,
    broadcastable_arrays,
    broadcastable_shapes,
    shapes,
    valid_dims,
    well_conditioned_matrices,
)
from tests.budget import examples
from tests.check.corpus import RIGHT, WRONG, SquareByLayout

FEW = settings(max_examples=examples(10), deadline=None)


@FEW
@given(shapes=broadcastable_shapes(3))
def test_broadcastable_shapes_broadcast(shapes) -> None:
    np.broadcast_shapes(*shapes)


@FEW
@given(data=st.data(), x=arrays())
def test_valid_dims_index_the_array(data, x) -> None:
    dims = data.draw(valid_dims(x.ndim, multiple=True))
    np.sum(x, axis=dims)


@FEW
@given(a=well_conditioned_matrices(st.integers(1, 4), batch_shape=(2,)))
def test_matrices_are_well_conditioned(a) -> None:
    assert np.linalg.cond(a).max() < 10


@FEW
@given(x=arrays(positive=True), y=arrays(away_from=[0.0], dtype=np.float32))
def test_domains(x, y) -> None:
    assert (x > 0).all() and (np.abs(y) >= 0.1).all() and y.dtype == np.float32


@FEW
@given(xs=broadcastable_arrays(2))
def test_mul_grads(xs) -> None:
    assert_grads_close(fg.mul, *xs, order=2)


@FEW
@given(x=arrays(away_from=[0.0]))
def test_abs_grads_away_from_its_kink(x) -> None:
    assert_grads_close(fg.abs, x, order=2)


@FEW
@given(x=arrays((3,), dtype=np.float32))
def test_right_function_in_float32(x) -> None:
    assert_grads_close(RIGHT[0].function.apply, x, order=2)


def test_wrong_function_fails_and_shrinks() -> None:
    @settings(max_examples=examples(10), deadline=None, database=None)
    @given(x=arrays((2,)))
    def check(x) -> None:
        assert_grads_close(WRONG[1].function.apply, x, order=1)  # MissingFactor

    with pytest.raises(AssertionError, match="jacobian check failed"):
        check()


@FEW
@given(x=arrays(shapes(2, 3, min_side=2), layouts=True))
def test_layouts_draw_the_same_values_in_other_memory_orders(x) -> None:
    assert np.all(np.abs(x) <= 3)
    assert_grads_close(lambda t: t * t, x, order=1)


@FEW
@given(x=arrays((), layouts=True), y=arrays((1, 3), layouts=True))
def test_layouts_keep_the_shape_asked_for(x, y) -> None:
    # np.ascontiguousarray and np.asfortranarray make a 0-d array 1-d: a property of scalars checked vectors
    assert x.shape == () and y.shape == (1, 3)


def test_a_derivative_wrong_for_one_layout_fails_a_property_with_layouts() -> None:
    @settings(max_examples=20, deadline=None, database=None)
    @given(x=arrays(shapes(1, 1, min_side=2), layouts=True))  # 1-d: only the strided and reversed layouts differ
    def prop(x) -> None:
        assert_grads_close(SquareByLayout.apply, x, order=1)

    with pytest.raises(AssertionError, match="jacobian check failed for apply"):
        prop()
