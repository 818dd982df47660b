"""``kernels.broadcast_view`` (the view behind broadcast_to, expand and spread gradients) against
``np.broadcast_to``: same values, shape and dtype, read-only, sharing memory, and NumPy's errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays, floating_dtypes

import funcgrad as fg
from funcgrad.ops.kernels import broadcast_view
from tests.budget import examples


@st.composite
def _operand_and_shape(draw: st.DrawFn) -> tuple[np.ndarray, tuple[int, ...]]:
    shape = draw(st.lists(st.integers(0, 4), max_size=4).map(tuple))
    kept = shape[len(shape) - draw(st.integers(0, len(shape))):]  # trailing dims, each kept or 1
    operand_shape = tuple(n if draw(st.booleans()) else 1 for n in kept)
    x = draw(arrays(draw(floating_dtypes(sizes=(32, 64))), operand_shape, elements=st.floats(-3, 3, width=32)))
    if draw(st.booleans()) and x.ndim:  # a strided view: taken by np.broadcast_to itself
        x = np.repeat(x, 2, axis=-1)[..., ::2]
    return x, shape


@settings(max_examples=examples(200), deadline=None)
@given(_operand_and_shape())
def test_broadcast_view_is_numpys_broadcast(case: tuple[np.ndarray, tuple[int, ...]]) -> None:
    x, shape = case
    got, want = broadcast_view(x, shape), np.broadcast_to(x, shape)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert not got.flags.writeable  # a write would land on every broadcast copy at once
    assert got.size == 0 or np.shares_memory(got, x)


def test_broadcast_view_of_scalars_and_errors() -> None:
    np.testing.assert_array_equal(broadcast_view(np.float64(2.5), (2, 3)), np.full((2, 3), 2.5))
    assert broadcast_view(1.5, ()).shape == () and broadcast_view(np.ones(1), 4).shape == (4,)
    for x, shape in ((np.ones(3), (2, 4)), (np.ones(3), (-1, 3)), (np.ones((2, 3)), (3,))):
        with pytest.raises(ValueError) as got:
            broadcast_view(x, shape)
        with pytest.raises(ValueError) as want:
            np.broadcast_to(x, shape)
        assert str(got.value) == str(want.value)


def test_broadcast_to_keeps_a_size_given_as_minus_one_as_torch() -> None:
    """torch's broadcast_to takes expand's -1 (keep that size) and refuses it for a new leading dim; NumPy's
    spelling refuses any negative size. A 0-d tensor broadcast to (-1,) gave tensor([2.]) silently."""
    t = fg.tensor([1.0, 2.0], requires_grad=True)
    y = fg.broadcast_to(t, (3, -1))
    assert y.shape == (3, 2)
    y.sum().backward()
    np.testing.assert_array_equal(t.grad.data, [3.0, 3.0])
    assert fg.broadcast_to(t, (-1,)).shape == (2,)
    for source in (fg.tensor(2.0), t):
        with pytest.raises(RuntimeError, match=r"expanded size of the tensor \(-1\) isn't allowed in a leading"):
            fg.broadcast_to(source, (-1, -1) if source.ndim else (-1,))
    with pytest.raises(ValueError, match="must be non-negative"):
        np.broadcast_to(t, (-1,))
