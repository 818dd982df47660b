"""Property test: conv2d, conv_transpose2d and the poolings equal torch's (values and gradients) over
random shapes, strides, paddings, dilations and groups."""
from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from funcgrad.nn import functional as F
from tests.budget import examples
from tests.nn.torch_compare import compare, needs_torch, torch

pytestmark = needs_torch
TF = torch.nn.functional if torch is not None else None


@st.composite
def conv_cases(draw: st.DrawFn) -> tuple[dict, tuple[int, ...], tuple[int, ...], int]:
    groups = draw(st.integers(1, 2))
    c_in, c_out = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    span = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    size = tuple(draw(st.integers(max(1, s - 2 * p), s + 4)) for s, p in zip(span, padding))
    kwargs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    return kwargs, (draw(st.integers(1, 2)), c_in) + size, (c_out, c_in // groups) + kernel, draw(st.integers(0, 99))


@settings(max_examples=examples(25), deadline=None)
@given(conv_cases())
def test_conv2d_and_its_transpose_match_torch(case) -> None:
    kwargs, x_shape, w_shape, seed = case
    rng = np.random.default_rng(seed)
    x, w, b = rng.normal(size=x_shape), rng.normal(size=w_shape), rng.normal(size=w_shape[0])
    compare(lambda x, w, b: F.conv2d(x, w, b, **kwargs), lambda x, w, b: TF.conv2d(x, w, b, **kwargs), x, w, b)
    y_shape = TF.conv2d(torch.tensor(x), torch.tensor(w), **kwargs).shape
    y = rng.normal(size=tuple(y_shape))
    extra = tuple(int(rng.integers(0, max(s, d))) for s, d in zip(kwargs["stride"], kwargs["dilation"]))
    sizes = [(n - 1) * s - 2 * p + d * (k - 1) + 1 + e for n, s, p, d, k, e in zip(
        y_shape[2:], kwargs["stride"], kwargs["padding"], kwargs["dilation"], w_shape[2:], extra)]
    assume(min(sizes) >= 1)  # else torch raises too
    compare(lambda y, w: F.conv_transpose2d(y, w, output_padding=extra, **kwargs),
            lambda y, w: TF.conv_transpose2d(y, w, output_padding=extra, **kwargs), y, w)


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.booleans(), st.booleans(), st.integers(3, 7),
       st.integers(0, 99))
def test_pools_match_torch(kernel: int, stride: int, padding: int, ceil_mode: bool, count_include_pad: bool,
                           size: int, seed: int) -> None:
    padding = min(padding, kernel // 2)
    x = np.random.default_rng(seed).permutation(np.linspace(-2, 2, 2 * 2 * size * (size + 1))).reshape(
        2, 2, size, size + 1)  # distinct values: no ties
    args = (kernel, stride, padding)
    compare(lambda x: F.max_pool2d(x, *args, ceil_mode=ceil_mode), lambda x: TF.max_pool2d(x, *args,
            ceil_mode=ceil_mode), x)
    compare(lambda x: F.avg_pool2d(x, *args, ceil_mode, count_include_pad),
            lambda x: TF.avg_pool2d(x, *args, ceil_mode, count_include_pad), x)


@settings(max_examples=examples(25), deadline=None)
@given(st.tuples(st.integers(1, 3), st.integers(1, 3)), st.tuples(st.integers(1, 3), st.integers(1, 3)),
       st.tuples(st.integers(0, 1), st.integers(0, 1)), st.tuples(st.integers(1, 2), st.integers(1, 2)),
       st.booleans(), st.integers(0, 99))
def test_max_pool_indices_match_torch_with_ties_and_nans(kernel, stride, padding, dilation, ceil_mode: bool,
                                                         seed: int) -> None:
    """Values drawn from {-inf, 0, 1, NaN}: ties, NaNs and all -inf windows; the indices equal torch's."""
    padding = tuple(min(p, (d * (k - 1) + 1) // 2) for p, k, d in zip(padding, kernel, dilation))
    x = np.random.default_rng(seed).choice([-np.inf, 0.0, 1.0, np.nan], size=(2, 2, 7, 6), p=[0.4, 0.3, 0.2, 0.1])
    kwargs = {"stride": stride, "padding": padding, "dilation": dilation, "ceil_mode": ceil_mode,
              "return_indices": True}
    values, indices = F.max_pool2d(x, kernel, **kwargs)
    expected, expected_indices = TF.max_pool2d(torch.tensor(x), kernel, **kwargs)
    np.testing.assert_array_equal(values.data, expected.numpy())
    np.testing.assert_array_equal(indices.data, expected_indices.numpy())
