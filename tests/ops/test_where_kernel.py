"""The ``where`` kernel's bitwise path (zeroing a float array under a mask) equals np.where bit for bit:
NaN payloads, infinities and signed zeros kept, +0.0 written, NumPy's result dtype."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from funcgrad.ops import kernels as K
from tests.budget import examples


@settings(max_examples=examples(40), deadline=None)
@given(st.sampled_from([np.float64, np.float32]), hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
       st.sampled_from([0.0, 0, -0.0, 1.0]), st.booleans(), st.integers(0, 2**32 - 1), st.booleans())
def test_where_zeroing_matches_numpy_bit_for_bit(dtype, shape, zero, zero_first: bool, seed: int,
                                                 strided: bool) -> None:
    rng = np.random.default_rng(seed)
    a = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.25, 3.0], size=shape).astype(dtype)
    if strided and a.ndim:
        a = np.repeat(a, 2, axis=-1)[..., ::2]  # a non-contiguous array of the same shape
    condition = rng.random(shape) < 0.5
    args = (condition, zero, a) if zero_first else (condition, a, zero)
    got, expected = K.where(*args), np.where(*args)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(np.reshape(got, -1).view(np.uint8), np.reshape(expected, -1).view(np.uint8))
