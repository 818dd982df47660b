"""PyTorch's functions built from the table (funcgrad/ops/compositions.py, sorting.py, tensor_methods.py): first
and second derivatives against finite differences (float64), analytic values, in-place forms, and properties.
The values against torch itself are in test_compositions_torch.py."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
from funcgrad.check import gradcheck, gradgradcheck
from tests.budget import examples

_rng = np.random.default_rng(2024)


def _leaf(*shape: int, lo: float = -2.0, hi: float = 2.0) -> fg.Tensor:
    return fg.tensor(_rng.uniform(lo, hi, size=shape), requires_grad=True)


def _special(a: fg.Tensor, values: list[float]) -> fg.Tensor:
    """``a`` with the non-finite entries of ``values`` put in (the gradient reaches the others only)."""
    v = np.array(values)
    return fg.where(fg.tensor(~np.isfinite(v)), fg.tensor(v), a)


_DISTINCT = np.array([[0.3, -1.2, 2.0, 0.9, -0.1], [1.5, 0.1, -0.4, -2.2, 0.8], [-0.7, 1.1, 0.6, 1.9, -1.6]])

# name -> (function of the inputs, inputs): each case is differentiable at its inputs
CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "lerp_scalar": (lambda a, b: fg.lerp(a, b, 0.3), (_leaf(3, 4), _leaf(4))),
    "lerp_tensor": (fg.lerp, (_leaf(3, 4), _leaf(3, 4), _leaf(4, lo=0.0, hi=1.0))),
    "lerp_method": (lambda a, b, w: a.lerp(b, w), (_leaf(2, 3), _leaf(2, 3), _leaf(2, 1))),
    "addcmul": (lambda a, b, c: fg.addcmul(a, b, c, value=-0.5), (_leaf(3, 4), _leaf(4), _leaf(3, 1))),
    "addcdiv": (lambda a, b, c: a.addcdiv(b, c, value=2.0), (_leaf(3, 4), _leaf(3, 4), _leaf(4, lo=0.5, hi=2.0))),
    "logit": (fg.logit, (_leaf(3, 4, lo=0.1, hi=0.9),)),
    "logit_eps": (lambda a: fg.logit(a, 0.2), (fg.tensor([0.05, 0.3, 0.5, 0.7, 0.95], requires_grad=True),)),
    "nan_to_num": (lambda a: fg.nan_to_num(_special(a, [1.0, np.inf, np.nan, -np.inf]), 0.5), (_leaf(4),)),
    "deg2rad": (fg.deg2rad, (_leaf(3),)),
    "rad2deg": (lambda a: a.rad2deg(), (_leaf(3),)),
    "true_divide": (fg.true_divide, (_leaf(3), _leaf(3, lo=0.5, hi=2.0))),
    "float_power": (fg.float_power, (_leaf(3, lo=0.5, hi=2.0), _leaf(3))),
    "float_power_number": (lambda a: fg.float_power(a, 2.5), (_leaf(2, 2, lo=0.5, hi=2.0),)),
    "diff": (lambda a: fg.diff(a, 2, 0), (_leaf(5, 3),)),
    "diff_prepend": (lambda a, p, q: fg.diff(a, 1, -1, p, q), (_leaf(2, 3), _leaf(2, 1), _leaf(2, 2))),
    "inner": (fg.inner, (_leaf(2, 3), _leaf(4, 3))),
    "inner_0d": (fg.inner, (_leaf(), _leaf(2))),
    "cross": (lambda a, b: fg.cross(a, b, dim=1), (_leaf(2, 3), _leaf(1, 3))),
    "kron": (fg.kron, (_leaf(2, 3), _leaf(3))),
    "kron_3d": (fg.kron, (_leaf(2, 1, 2), _leaf(2, 2))),
    "dist": (fg.dist, (_leaf(3, 2), _leaf(2))),
    "dist_p3": (lambda a, b: fg.dist(a, b, 3), (_leaf(4), _leaf(4))),
    "std_mean": (lambda a: fg.std_mean(a, 1), (_leaf(3, 4),)),
    "var_mean": (lambda a: fg.var_mean(a, (0, 1), correction=0, keepdim=True), (_leaf(3, 4),)),
    "nansum": (lambda a: fg.nansum(_special(a, [1.0, np.nan, 2.0]), 0), (_leaf(2, 3),)),
    "nanmean": (lambda a: fg.nanmean(_special(a, [1.0, np.nan, 2.0]), 1), (_leaf(2, 3),)),
    "repeat_interleave": (lambda a: fg.repeat_interleave(a, fg.tensor([1, 0, 3]), 1), (_leaf(2, 3),)),
    "repeat_interleave_flat": (lambda a: a.repeat_interleave(2), (_leaf(2, 2),)),
    "fliplr": (fg.fliplr, (_leaf(2, 3),)),
    "flipud": (fg.flipud, (_leaf(2, 3),)),
    "rot90": (lambda a: fg.rot90(a, 1, (1, 2)), (_leaf(2, 3, 4),)),
    "rot90_3": (lambda a: fg.rot90(a, -1), (_leaf(2, 3),)),
    "moveaxis": (lambda a: fg.moveaxis(a, 0, -1), (_leaf(2, 3, 4),)),
    "swapdims": (lambda a: a.swapdims(0, 2), (_leaf(2, 3, 4),)),
    "index_add": (lambda a, s: fg.index_add(a, 1, fg.tensor([2, 0, 2]), s, alpha=-2), (_leaf(2, 3), _leaf(2, 3))),
    "index_fill": (lambda a, v: a.index_fill(0, fg.tensor([1]), v), (_leaf(3, 2), _leaf())),
    "sort": (lambda a: fg.sort(a, 1).values, (fg.tensor(_DISTINCT, requires_grad=True),)),
    "sort_descending": (lambda a: fg.sort(a, 0, descending=True)[0], (fg.tensor(_DISTINCT, requires_grad=True),)),
    "msort": (fg.msort, (fg.tensor(_DISTINCT, requires_grad=True),)),
    "topk": (lambda a: fg.topk(a, 2).values, (fg.tensor(_DISTINCT, requires_grad=True),)),
    "topk_smallest": (lambda a: fg.topk(a, 2, 0, largest=False).values, (fg.tensor(_DISTINCT, requires_grad=True),)),
    "kthvalue": (lambda a: fg.kthvalue(a, 2, 1, True).values, (fg.tensor(_DISTINCT, requires_grad=True),)),
    "median": (fg.median, (fg.tensor(_DISTINCT, requires_grad=True),)),
    "median_dim": (lambda a: a.median(1).values, (fg.tensor(_DISTINCT, requires_grad=True),)),
    "aminmax": (lambda a: fg.aminmax(a, dim=0), (fg.tensor(_DISTINCT, requires_grad=True),)),
    "cummax": (lambda a: fg.cummax(a, 1).values, (fg.tensor(_DISTINCT, requires_grad=True),)),
    "cummin": (lambda a: a.cummin(0).values, (fg.tensor(_DISTINCT, requires_grad=True),)),
    "contiguous": (lambda a: a.t().contiguous().view(-1), (_leaf(2, 3),)),
    "type_as": (lambda a: a.type_as(fg.zeros(1)), (_leaf(3),)),
}


# ----- analytic values --------------------------------------------------------------------------------------
def test_lerp_addcmul_addcdiv_values_and_grads() -> None:
    a, b, w = fg.tensor([1.0, 2.0], requires_grad=True), fg.tensor([3.0, 6.0], requires_grad=True), 0.25
    out = fg.lerp(a, b, w)
    np.testing.assert_allclose(out.data, [1.5, 3.0])
    out.sum().backward()
    np.testing.assert_allclose(a.grad.data, [0.75, 0.75])
    np.testing.assert_allclose(b.grad.data, [0.25, 0.25])
    np.testing.assert_allclose(fg.addcmul(fg.ones(2), fg.tensor([2.0, 3.0]), fg.tensor([4.0, 5.0]), value=0.5).data,
                               [5.0, 8.5])
    np.testing.assert_allclose(fg.addcdiv(fg.ones(2), fg.tensor([2.0, 3.0]), fg.tensor([4.0, 6.0]), value=2).data,
                               [2.0, 2.0])
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        fg.addcdiv(fg.ones(2), fg.tensor([1, 2]), fg.tensor([3, 4]))


def test_logit_is_the_inverse_of_sigmoid_and_zero_gradient_outside_eps() -> None:
    x = fg.tensor([-2.0, 0.0, 1.5])
    np.testing.assert_allclose(fg.logit(fg.sigmoid(x)).data, x.data, atol=1e-12)
    p = fg.tensor([0.05, 0.5, 0.95], requires_grad=True)
    fg.logit(p, 0.1).sum().backward()
    np.testing.assert_allclose(p.grad.data, [0.0, 4.0, 0.0])
    np.testing.assert_allclose(fg.logit(p, 0.1).data, [math.log(0.1 / 0.9), 0.0, math.log(0.9 / 0.1)])


def test_xlogy_is_zero_at_x_zero_and_its_gradient_is_torchs() -> None:
    x = fg.tensor([0.0, 0.0, 2.0, 0.0], requires_grad=True)
    y = fg.tensor([0.0, 3.0, 3.0, -1.0], requires_grad=True)
    out = fg.xlogy(x, y)
    np.testing.assert_allclose(out.data, [0.0, 0.0, 2 * math.log(3.0), 0.0])
    with np.errstate(invalid="ignore"):  # y's gradient at (0, 0) is 0 / 0
        out.sum().backward()
    np.testing.assert_allclose(x.grad.data, [0.0, math.log(3.0), math.log(3.0), 0.0])  # 0 where y <= 0
    assert np.isnan(y.grad.data[0])  # 0 / 0, as torch
    np.testing.assert_allclose(y.grad.data[1:], [0.0, 2 / 3, 0.0])


def test_fmod_and_frac() -> None:
    x, y = fg.tensor([-3.5, 3.5, 5.25], requires_grad=True), fg.tensor([2.0, -2.0, 1.0], requires_grad=True)
    out = fg.fmod(x, y)
    np.testing.assert_allclose(out.data, [-1.5, 1.5, 0.25])  # the sign of x, unlike remainder
    out.sum().backward()
    np.testing.assert_allclose(x.grad.data, [1.0, 1.0, 1.0])
    np.testing.assert_allclose(y.grad.data, [1.0, 1.0, -5.0])  # -trunc(x / y)
    np.testing.assert_allclose(fg.frac(fg.tensor([-1.5, 2.25])).data, [-0.5, 0.25])
    with pytest.raises(NotImplementedError, match="frac_cpu"):
        fg.frac(fg.tensor([1, 2]))


def test_logcumsumexp_is_stable_and_its_gradient_is_a_softmax_of_the_prefix() -> None:
    x = fg.tensor([-1000.0, 0.0, 1000.0, 1000.0], requires_grad=True)
    out = fg.logcumsumexp(x, 0)
    np.testing.assert_allclose(out.data, [-1000.0, 0.0, 1000.0, 1000.0 + math.log(2.0)])
    out[3].backward()
    np.testing.assert_allclose(x.grad.data, [0.0, 0.0, 0.5, 0.5])
    v = fg.tensor(_DISTINCT, requires_grad=True)
    np.testing.assert_allclose(fg.logcumsumexp(v, 1).data, np.log(np.cumsum(np.exp(_DISTINCT), 1)))


def test_nan_to_num_replaces_and_stops_the_gradient_there() -> None:
    x = fg.tensor([np.nan, np.inf, -np.inf, 1.5], requires_grad=True)
    out = fg.nan_to_num(x)
    info = np.finfo(np.float64)
    np.testing.assert_array_equal(out.data, [0.0, info.max, info.min, 1.5])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [0.0, 0.0, 0.0, 1.0])
    assert fg.nan_to_num(fg.tensor([1.0], dtype=np.float32), posinf=2.0).dtype == np.float32
    np.testing.assert_array_equal(fg.nan_to_num(fg.tensor([1, 2])).data, [1, 2])


def test_sorting_values_indices_and_gradient_to_the_source() -> None:
    x = fg.tensor([3.0, 1.0, np.nan, 2.0], requires_grad=True)
    values, indices = fg.sort(x)
    np.testing.assert_array_equal(indices.data, [1, 3, 0, 2])  # NaN last
    np.testing.assert_array_equal(fg.argsort(x, descending=True).data, [2, 0, 3, 1])  # NaN first
    values[:3].sum().backward()
    np.testing.assert_array_equal(x.grad.data, [1.0, 1.0, 0.0, 1.0])
    assert fg.argsort(fg.tensor([2, 1, 2, 1]), stable=True).tolist() == [1, 3, 0, 2]
    assert fg.argsort(fg.tensor([2, 1, 2, 1]), descending=True).tolist() == [0, 2, 1, 3]
    top = fg.topk(fg.tensor(_DISTINCT), 2, dim=0)
    np.testing.assert_array_equal(top.values.data, np.sort(_DISTINCT, 0)[::-1][:2])
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        fg.topk(fg.ones(3), 4)
    with pytest.raises(RuntimeError, match="kthvalue"):
        fg.kthvalue(fg.ones(3), 0)


def test_median_is_the_lower_median_and_ties_share_the_gradient() -> None:
    x = fg.tensor([4.0, 1.0, 2.0, 3.0], requires_grad=True)
    assert fg.median(x).item() == 2.0
    m = fg.median(x, 0)
    assert m.values.item() == 2.0 and m.indices.item() == 2
    y = fg.tensor([2.0, 5.0, 2.0, 1.0, 7.0], requires_grad=True)
    out = y.median()
    assert out.item() == 2.0
    out.backward()
    np.testing.assert_array_equal(y.grad.data, [0.5, 0.0, 0.5, 0.0, 0.0])
    z = fg.tensor([0.1, 0.1, 0.1, 0.2])
    assert fg.median(z).item() == 0.1  # exactly the value: no sum-then-divide round-off
    assert np.isnan(fg.median(fg.tensor([1.0, np.nan, 2.0])).item())


def test_cummax_cummin_take_the_last_index_on_ties() -> None:
    values, indices = fg.cummax(fg.tensor([1.0, 3.0, 3.0, 2.0, 5.0, 5.0]), 0)
    np.testing.assert_array_equal(values.data, [1, 3, 3, 3, 5, 5])
    np.testing.assert_array_equal(indices.data, [0, 1, 2, 2, 4, 5])
    values, indices = fg.cummin(fg.tensor([3.0, 1.0, 1.0, 2.0]), 0)
    np.testing.assert_array_equal(indices.data, [0, 1, 2, 2])


def test_comparisons_of_whole_tensors() -> None:
    a, b = fg.tensor([1.0, np.nan, 2.0]), fg.tensor([1.0 + 1e-9, np.nan, 2.1])
    assert fg.isclose(a, b).tolist() == [True, False, False]
    assert fg.isclose(a, b, equal_nan=True).tolist() == [True, True, False]
    assert fg.allclose(a[:1], b[:1]) is True and a.allclose(b, equal_nan=True) is False
    assert fg.equal(fg.ones(2), fg.ones(2)) is True
    assert fg.equal(fg.ones(2), fg.ones(3)) is False
    assert fg.count_nonzero(fg.tensor([[0, 1], [2, 0]]), 0).tolist() == [1, 1]
    assert fg.count_nonzero(fg.tensor([0.0, 1.5])).item() == 1


def test_shape_errors_are_torchs() -> None:
    with pytest.raises(RuntimeError, match="diff expects input to be at least one-dimensional"):
        fg.diff(fg.tensor(1.0))
    with pytest.raises(RuntimeError, match="order must be non-negative"):
        fg.diff(fg.ones(2), -1)
    with pytest.raises(RuntimeError, match="Input must be >= 2-d."):
        fg.fliplr(fg.ones(2))
    with pytest.raises(RuntimeError, match="expected rotation dims to be different"):
        fg.rot90(fg.ones(2, 2), 1, (0, 0))
    with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
        fg.cross(fg.ones(2, 2), fg.ones(2, 2))
    with pytest.raises(RuntimeError, match="must have length 3"):
        fg.cross(fg.ones(3, 2), fg.ones(3, 2), dim=1)


# ----- in-place forms -------------------------------------------------------------------------------------
INPLACE = {
    "lerp_": (lambda t, o: t.lerp_(o, 0.5), lambda t, o: fg.lerp(t, o, 0.5)),
    "addcmul_": (lambda t, o: t.addcmul_(o, o, value=2), lambda t, o: fg.addcmul(t, o, o, value=2)),
    "addcdiv_": (lambda t, o: t.addcdiv_(o, o * o + 1), lambda t, o: fg.addcdiv(t, o, o * o + 1)),
    "xlogy_": (lambda t, o: t.xlogy_(o * o + 1), lambda t, o: fg.xlogy(t, o * o + 1)),
    "fmod_": (lambda t, o: t.fmod_(1.5), lambda t, o: fg.fmod(t, 1.5)),
    "frac_": (lambda t, o: t.frac_(), lambda t, o: fg.frac(t)),
    "deg2rad_": (lambda t, o: t.deg2rad_(), lambda t, o: fg.deg2rad(t)),
    "nan_to_num_": (lambda t, o: t.nan_to_num_(), lambda t, o: fg.nan_to_num(t)),
    "tril_": (lambda t, o: t.tril_(), lambda t, o: fg.tril(t)),
    "triu_": (lambda t, o: t.triu_(1), lambda t, o: fg.triu(t, 1)),
    "index_add_": (lambda t, o: t.index_add_(0, fg.tensor([1, 1]), o[:2]),
                   lambda t, o: fg.index_add(t, 0, fg.tensor([1, 1]), o[:2])),
    "index_fill_": (lambda t, o: t.index_fill_(1, fg.tensor([0]), 7.0),
                    lambda t, o: fg.index_fill(t, 1, fg.tensor([0]), 7.0)),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_in_place_forms_equal_the_functions_bump_the_version_and_carry_the_gradient(name: str) -> None:
    in_place, function = INPLACE[name]
    x0, other0 = _rng.uniform(0.2, 2.0, (3, 3)), _rng.uniform(-1.0, 1.0, (3, 3))
    x, other = fg.tensor(x0, requires_grad=True), fg.tensor(other0, requires_grad=True)
    expected = function(x, other)
    (gx_expected, go_expected) = fg.autograd.grad(expected.sum(), (x, other), allow_unused=True, materialize_grads=True)
    t = x * 1
    version = t._version
    assert in_place(t, other) is t
    assert t._version > version
    np.testing.assert_allclose(t.data, expected.data)
    gx, go = fg.autograd.grad(t.sum(), (x, other), allow_unused=True, materialize_grads=True)
    np.testing.assert_allclose(gx.data, gx_expected.data)
    np.testing.assert_allclose(go.data, go_expected.data)


# ----- Tensor methods without derivative -------------------------------------------------------------------
def test_layout_methods() -> None:
    x = fg.ones(2, 3)
    assert x.is_contiguous() and x.contiguous() is x
    assert x.stride() == (3, 1) and x.t().stride() == (1, 3) and x.stride(-1) == 1
    assert not x.t().is_contiguous() and x.t().contiguous().is_contiguous()
    assert fg.ones(2).expand(3, 2).stride() == (0, 1)
    assert fg.ones(()).stride() == ()
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.stride(2)
    assert x.element_size() == 8 and fg.ones(2, dtype=np.float32).element_size() == 4
    assert x.nelement() == 6 and fg.numel(x) == 6
    t = fg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    c = t.t().contiguous()
    assert c.grad_fn.name() == "CloneBackward0"
    np.testing.assert_array_equal(c.view(-1).data, [1.0, 3.0, 2.0, 4.0])


def test_conversions_and_factories() -> None:
    x = fg.tensor([1.7, -2.2], dtype=np.float32, requires_grad=True)
    assert x.int().dtype == np.int32 and x.long().dtype == np.int64 and x.half().dtype == np.float16
    assert x.bool().tolist() == [True, True] and not x.long().requires_grad
    assert x.type_as(fg.zeros(1)).dtype == np.float64 and x.type_as(x) is x
    assert x.new_zeros(2, 3).dtype == np.float32 and x.new_zeros((2,)).shape == (2,)
    assert x.new_ones(2, dtype=np.int64).tolist() == [1, 1]
    assert x.new_full((2,), 3).tolist() == [3.0, 3.0] and x.new_full((2,), 3).dtype == np.float32
    assert x.new_empty(4).shape == (4,)
    n = x.new_tensor([1, 2], requires_grad=True)
    assert n.dtype == np.float32 and n.requires_grad and n.is_leaf
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        x.new_tensor(x)
    assert fg.is_tensor(x) and not fg.is_tensor(1.0)
    assert fg.is_floating_point(x) and not fg.is_complex(x) and fg.is_complex(fg.tensor([1j]))
    assert fg.is_nonzero(fg.tensor([1.0])) and not fg.is_nonzero(fg.tensor(0))


# ----- properties -------------------------------------------------------------------------------------------
_floats = st.floats(-10.0, 10.0, allow_nan=False, allow_subnormal=False)


@settings(max_examples=examples(40), deadline=None)
@given(a=hnp.arrays(np.float64, st.integers(1, 7), elements=_floats))
def test_sort_is_an_ordered_permutation_and_topk_its_head(a: np.ndarray) -> None:
    values, indices = fg.sort(fg.tensor(a), descending=True)
    np.testing.assert_array_equal(values.data, a[indices.data])
    assert np.all(np.diff(values.data) <= 0)
    assert sorted(indices.tolist()) == list(range(a.size))
    k = (a.size + 1) // 2
    np.testing.assert_array_equal(fg.topk(fg.tensor(a), k).values.data, values.data[:k])
    assert fg.median(fg.tensor(a)).item() == np.sort(a)[(a.size - 1) // 2]


@settings(max_examples=examples(40), deadline=None)
@given(a=hnp.arrays(np.float64, st.integers(1, 6), elements=_floats),
       b=hnp.arrays(np.float64, st.integers(1, 6), elements=_floats))
def test_kron_of_vectors_is_the_flattened_outer_product(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose(fg.kron(fg.tensor(a), fg.tensor(b)).data, np.kron(a, b))


@settings(max_examples=examples(40), deadline=None)
@given(a=hnp.arrays(np.float64, (4, 3), elements=_floats), b=hnp.arrays(np.float64, (4, 3), elements=_floats))
def test_cross_is_orthogonal_and_antisymmetric(a: np.ndarray, b: np.ndarray) -> None:
    c = fg.cross(fg.tensor(a), fg.tensor(b), dim=1).data
    np.testing.assert_allclose(c, np.cross(a, b), atol=1e-9)
    np.testing.assert_allclose(fg.cross(fg.tensor(b), fg.tensor(a), dim=1).data, -c, atol=1e-9)


@settings(max_examples=examples(40), deadline=None)
@given(a=hnp.arrays(np.float64, st.integers(1, 6), elements=st.floats(-700.0, 700.0)))
def test_logcumsumexp_matches_a_running_logaddexp_and_its_last_entry_is_logsumexp(a: np.ndarray) -> None:
    out = fg.logcumsumexp(fg.tensor(a), 0).data
    np.testing.assert_allclose(out[-1], fg.logsumexp(fg.tensor(a), 0).data, rtol=1e-12, atol=1e-12)
    assert np.all(np.diff(out) >= 0)


# ----- shape-changing in-place forms ----------------------------------------------------------------------------
RESTRIDES = {
    "t_": (lambda t: t.t_(), lambda t: t.t()),
    "transpose_": (lambda t: t.transpose_(0, 1), lambda t: t.transpose(0, 1)),
    "swapdims_": (lambda t: t.swapdims_(1, 0), lambda t: t.transpose(1, 0)),
    "squeeze_": (lambda t: t.unsqueeze_(1).squeeze_(1), lambda t: t),
    "unsqueeze_": (lambda t: t.unsqueeze_(-1), lambda t: t.unsqueeze(-1)),
}


@pytest.mark.parametrize("name", sorted(RESTRIDES))
def test_shape_changing_in_place_forms_share_memory_bump_the_version_and_differentiate(name: str) -> None:
    in_place, function = RESTRIDES[name]
    x = fg.tensor(_DISTINCT[:2, :3].copy(), requires_grad=True)
    t = x * 1
    memory, version = t.data, t._version
    assert in_place(t) is t
    assert t._version > version and np.shares_memory(t.data, memory)
    expected = function(x * 1)
    assert t.shape == expected.shape
    np.testing.assert_array_equal(t.data, expected.data)
    w = fg.tensor(_rng.uniform(-1.0, 1.0, t.shape))
    (g,) = fg.autograd.grad((t * w).sum(), x)
    (g_expected,) = fg.autograd.grad((expected * w).sum(), x)
    np.testing.assert_array_equal(g.data, g_expected.data)


def test_views_made_before_a_transpose_in_place_keep_their_elements() -> None:
    x = fg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 1
    row = y[0]
    y.t_()
    y.mul_(fg.tensor([[1.0], [2.0], [3.0]]))  # the base written in place: the row's history is rebuilt from it
    np.testing.assert_array_equal(row.data, [1.0, 4.0, 9.0])
    (g,) = fg.autograd.grad(row.sum(), x)
    np.testing.assert_array_equal(g.data, [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    leaf = fg.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf.t_()


# ----- aliases and one-op functions ---------------------------------------------------------------------------------
def test_aliases_are_the_ops_themselves() -> None:
    assert fg.absolute is fg.abs and fg.arccos is fg.acos and fg.multiply is fg.mul and fg.concat is fg.cat
    x = fg.tensor([-1.0, 0.5])
    np.testing.assert_array_equal(x.negative().data, [1.0, -0.5])
    assert x.greater(0).tolist() == [False, True]


ALIAS_CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "clamp_min": (lambda a: a.clamp_min(0.1), (fg.tensor([-0.5, 0.4, 1.2], requires_grad=True),)),
    "clamp_max": (lambda a: fg.clamp_max(a, 0.1), (fg.tensor([-0.5, 0.4, 1.2], requires_grad=True),)),
    "subtract": (lambda a, b: fg.subtract(a, b, alpha=2), (_leaf(3), _leaf(2, 3))),
    "addmm": (lambda a, b, c: fg.addmm(a, b, c, beta=0.5, alpha=-2), (_leaf(3), _leaf(2, 4), _leaf(4, 3))),
    "addmm_beta0": (lambda a, b, c: a.addmm(b, c, beta=0), (_leaf(2, 3), _leaf(2, 4), _leaf(4, 3))),
    "addmv": (fg.addmv, (_leaf(2), _leaf(2, 3), _leaf(3))),
    "addr": (lambda a, b, c: fg.addr(a, b, c, alpha=3), (_leaf(2, 3), _leaf(2), _leaf(3))),
    "addbmm": (fg.addbmm, (_leaf(2, 3), _leaf(4, 2, 5), _leaf(4, 5, 3))),
    "baddbmm": (lambda a, b, c: a.baddbmm(b, c, beta=2), (_leaf(4, 2, 3), _leaf(4, 2, 5), _leaf(4, 5, 3))),
    "mv": (fg.mv, (_leaf(2, 3), _leaf(3))),
    "reshape_as": (lambda a: a.reshape_as(fg.ones(3, 2)), (_leaf(2, 3),)),
    "masked_select": (lambda a: a.masked_select(fg.tensor([True, False, True])), (_leaf(2, 3),)),
    "copysign": (lambda a: fg.copysign(a, fg.tensor([-1.0, 0.0, -0.0])), (_leaf(2, 3),)),
    "ravel": (lambda a: fg.ravel(a.t()), (_leaf(2, 3),)),
    "erfinv": (fg.erfinv, (_leaf(4, lo=-0.9, hi=0.9),)),
    "sinc": (fg.sinc, (fg.tensor([-1.3, 0.0, 0.2, 2.6], requires_grad=True),)),
    "where_method": (lambda a, b: a.where(a > 0, b * b), (_leaf(3, 4), _leaf(4))),
    # torch's full signatures of table ops, and the joins
    "add_alpha": (lambda a, b: fg.add(a, b, alpha=-2), (_leaf(3), _leaf(2, 3))),
    "sub_alpha_method": (lambda a, b: a.sub(b, alpha=0.5), (_leaf(2, 3), _leaf(3))),
    "var_unbiased": (lambda a: fg.var(a, 1, unbiased=False, keepdim=True), (_leaf(2, 3),)),
    "std_unbiased_only": (lambda a: a.std(False), (_leaf(2, 3),)),
    "norm_nuc": (lambda a: a.norm("nuc"), (_leaf(3, 2),)),
    "norm_fro_dims": (lambda a: fg.norm(a, p="fro", dim=(0, 2)), (_leaf(2, 3, 2),)),
    "hstack": (lambda a, b: fg.hstack([a, b]), (_leaf(2, 3), _leaf(2, 1))),
    "vstack": (lambda a, b: fg.vstack((a, b)), (_leaf(3), _leaf(2, 3))),
    "dstack": (lambda a, b: fg.dstack([a, b]), (_leaf(3), _leaf(3))),
    "column_stack": (lambda a, b, c: fg.column_stack([a, b, c]), (_leaf(2), _leaf(2, 2), _leaf(2))),
    "meshgrid_xy": (lambda a, b: fg.meshgrid(a, b, indexing="xy"), (_leaf(3), _leaf(2))),
    "complex_abs": (lambda a, b: fg.complex(a, b).abs(), (_leaf(2, 3), _leaf(3))),
}


def test_one_op_function_values() -> None:
    x = fg.tensor([[1.0, -2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(fg.divide(fg.tensor([7, -7]), 2, rounding_mode="trunc").data, [3, -3])
    np.testing.assert_array_equal(fg.divide(fg.tensor([7.0, -7.0]), 2, rounding_mode="floor").data, [3.0, -4.0])
    with pytest.raises(RuntimeError, match="rounding_mode"):
        fg.divide(x, 2, rounding_mode="round")
    assert fg.nonzero(x > 1.5).tolist() == [[1, 0], [1, 1]]
    assert [i.tolist() for i in fg.nonzero(x > 1.5, as_tuple=True)] == [[1, 1], [0, 1]]
    assert fg.argwhere(x < 0).tolist() == [[0, 1]]
    assert fg.signbit(fg.tensor([-0.0, 0.0, -1.0])).tolist() == [True, False, True]
    assert fg.isposinf(fg.tensor([np.inf, -np.inf])).tolist() == [True, False]
    assert fg.isneginf(fg.tensor([np.inf, -np.inf])).tolist() == [False, True]
    np.testing.assert_allclose(fg.erfinv(fg.erf(x)).data, x.data, atol=1e-6)
    np.testing.assert_allclose(fg.logaddexp2(fg.tensor([3.0]), fg.tensor([3.0])).data, [4.0])
    assert fg.sinc(fg.tensor([0.0])).item() == 1.0
    assert fg.t(fg.ones(2, 3)).shape == (3, 2)
    with pytest.raises(RuntimeError, match="vector \\+ matrix @ vector expected"):
        fg.mv(x, x)


def test_sorting_a_0d_tensor_treats_it_as_one_element() -> None:
    x = fg.tensor(2.5, requires_grad=True)
    for values, indices in (fg.sort(x), fg.topk(x, 1), fg.kthvalue(x, 1), fg.median(x, 0), fg.cummax(x, 0)):
        assert values.shape == () and indices.shape == () and values.item() == 2.5 and indices.item() == 0
    (g,) = fg.autograd.grad(fg.sort(x).values, x)
    assert g.item() == 1.0
    assert fg.median(fg.tensor([3, 1, 2])).dtype == np.int64


# ----- order statistics, splits and the rest -------------------------------------------------------------------------
STAT_CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "quantile": (lambda a: fg.quantile(a, 0.3, 1), (fg.tensor(_DISTINCT, requires_grad=True),)),
    "quantile_q_tensor": (lambda a: fg.quantile(a, fg.tensor([0.1, 0.75]), 0, keepdim=True),
                          (fg.tensor(_DISTINCT, requires_grad=True),)),
    "quantile_midpoint": (lambda a: a.quantile(0.4, interpolation="midpoint"),
                          (fg.tensor(_DISTINCT, requires_grad=True),)),
    "nanquantile": (lambda a: fg.nanquantile(_special(a, [1.0, np.nan, 1.0, 1.0, np.nan]), 0.6, 1),
                    (fg.tensor(_DISTINCT, requires_grad=True),)),
    "nanmedian": (lambda a: fg.nanmedian(_special(a, [1.0, np.nan, 1.0, 1.0, np.nan]), 1).values,
                  (fg.tensor(_DISTINCT, requires_grad=True),)),
    "mode": (lambda a: fg.mode(a.round(), 1).values * a[:, :1], (fg.tensor(_DISTINCT, requires_grad=True),)),
    "tensor_split": (lambda a: fg.tensor_split(a, 2, 1), (_leaf(2, 5),)),
    "tensor_split_indices": (lambda a: fg.tensor_split(a, [1, 4], 1)[1], (_leaf(2, 5),)),
    "take": (lambda a: fg.take(a, fg.tensor([[0, 5], [5, 2]])), (_leaf(2, 3),)),
    "diag_embed": (lambda a: fg.diag_embed(a, 1), (_leaf(2, 3),)),
    "diag_embed_dims": (lambda a: fg.diag_embed(a, -1, 0, 2), (_leaf(2, 3),)),
    "diagflat": (fg.diagflat, (_leaf(2, 2),)),
}


def test_quantiles_interpolate_between_the_sorted_values() -> None:
    x = fg.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    np.testing.assert_allclose(fg.quantile(x, 0.3, 1).data, [1.9, 5.9])
    for interpolation, expected in {"lower": 4.0, "higher": 5.0, "midpoint": 4.5, "nearest": 5.0}.items():
        assert fg.quantile(x, 0.5, interpolation=interpolation).item() == expected
    assert fg.quantile(x, fg.tensor([0.0, 1.0]), 1).shape == (2, 2)
    assert np.isnan(fg.quantile(fg.tensor([1.0, np.nan]), 0.5).item())
    assert fg.nanquantile(fg.tensor([1.0, np.nan, 3.0]), 0.5).item() == 2.0
    with pytest.raises(RuntimeError, match="q must be in the range"):
        fg.quantile(x, 1.5)
    with pytest.raises(RuntimeError, match="must be either float or double"):
        fg.quantile(fg.tensor([1, 2]), 0.5)
    assert fg.nanmedian(fg.tensor([1.0, np.nan, 3.0, 2.0])).item() == 2.0
    m = fg.mode(fg.tensor([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 1.0, 1.0]]), 1)
    assert m.values.tolist() == [2.0, 1.0] and m.indices.tolist() == [2, 3]


def test_splits_selections_and_predicates() -> None:
    pieces = fg.tensor_split(fg.arange(7), 3)
    assert [p.tolist() for p in pieces] == [[0, 1, 2], [3, 4], [5, 6]]
    assert [p.tolist() for p in fg.tensor_split(fg.arange(7), [1, 5])] == [[0], [1, 2, 3, 4], [5, 6]]
    values, inverse, counts = fg.unique(fg.tensor([3, 1, 2, 3, 1]), return_inverse=True, return_counts=True)
    assert values.tolist() == [1, 2, 3] and inverse.tolist() == [2, 0, 1, 2, 0] and counts.tolist() == [2, 1, 2]
    assert fg.heaviside(fg.tensor([-1.0, 0.0, 2.0]), fg.tensor([0.5])).tolist() == [0.0, 0.5, 1.0]
    assert fg.all(fg.tensor([1.0, 0.0])).item() is False
    assert fg.any(fg.tensor([[1.0, 0.0], [0.0, 0.0]]), 1).tolist() == [True, False]
    assert fg.all(fg.tensor([1, 2]), 0, keepdim=True).tolist() == [True]
    assert fg.diagflat(fg.tensor([1.0, 2.0]), 1).tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    x = fg.ones(2, dtype=np.float32)
    assert x.short().dtype == np.int16 and x.char().dtype == np.int8 and x.byte().dtype == np.uint8
    assert x.cpu() is x and x.is_signed() and not x.bool().is_signed() and x.ndimension() == 1
    assert x.nbytes == 8 and x.itemsize == 4
    with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype Float"):
        x.float_power_(2)
    y = fg.tensor([2.0, 3.0])
    y.float_power_(2)
    assert y.tolist() == [4.0, 9.0] and y._version == 1


def test_to_takes_torchs_forms_and_the_only_device_is_the_cpu() -> None:
    x = fg.tensor([1.5, 2.0], requires_grad=True)
    assert x.device == fg.device("cpu") and repr(x.device) == "device(type='cpu')" and x.device.type == "cpu"
    assert x.to("cpu") is x and x.to(fg.device("cpu")) is x and x.to(float) is x
    assert x.to("cpu", np.float32).dtype == np.float32 and x.to(dtype=np.float16).dtype == np.float16
    assert x.to(fg.tensor([1])).dtype == np.int64 and x.to("float32").dtype == np.float32
    copied = x.to("cpu", copy=True)
    assert copied is not x and copied.grad_fn.name() == "CloneBackward0"
    (g,) = fg.autograd.grad(x.to(np.float32).sum(), x)
    assert g.dtype == np.float64 and g.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="CPU only"):
        x.to("cuda")
    with pytest.raises(RuntimeError, match="CPU only"):
        x.cuda()
    with pytest.raises(RuntimeError, match="device type at start of device string: banana"):
        x.to("banana")
    assert str(fg.device("cuda:1")) == "cuda:1" and fg.device("cuda", 1) == fg.device("cuda:1")


def test_factories_take_torchs_device_keyword() -> None:
    x = fg.zeros(2, device="cpu")
    for made in (fg.ones(2, device=x.device), fg.zeros_like(x, device="cpu"), fg.tensor([1.0, 2.0], device="cpu"),
                 fg.full((2,), 3.0, device=fg.device("cpu")), fg.rand(2, device="cpu"), fg.arange(2, device="cpu"),
                 x.new_zeros(2, device=x.device), x.new_tensor([1, 2], device="cpu")):
        assert made.shape == (2,) and made.device == x.device
    for factory in (lambda: fg.zeros(2, device="cuda"), lambda: fg.eye(2, device="cuda:0"),
                    lambda: x.new_ones(2, device="cuda")):
        with pytest.raises(RuntimeError, match="CPU only"):
            factory()


# ----- selections, scatters, counts --------------------------------------------------------------------------------
SELECTION_CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "unfold": (lambda a: a.unfold(1, 3, 2), (_leaf(2, 7),)),
    "unfold_overlapping": (lambda a: a.unfold(0, 2, 1) * a[:3].unfold(0, 2, 1).sum(), (_leaf(4, 2),)),
    "index_copy": (lambda a, s: fg.index_copy(a, 1, fg.tensor([2, 0]), s), (_leaf(2, 3), _leaf(2, 2))),
    "masked_scatter": (lambda a, s: a.masked_scatter(fg.tensor([[True, False, True], [False, True, False]]), s),
                       (_leaf(2, 3), _leaf(5))),
    "hsplit": (lambda a: fg.hsplit(a, 2), (_leaf(3, 4),)),
    "sum_to_size": (lambda a: a.sum_to_size(1, 3), (_leaf(2, 3),)),
}


def test_selection_values_counts_and_memory_queries() -> None:
    x = fg.arange(7.0)
    assert x.unfold(0, 3, 2).tolist() == [[0.0, 1.0, 2.0], [2.0, 3.0, 4.0], [4.0, 5.0, 6.0]]
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 7 but size is 8"):
        x.unfold(0, 8, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        x.unfold(0, 3, 0)
    assert fg.zeros(3, 2).index_copy(0, fg.tensor([2, 0]), fg.ones(2, 2)).tolist() == [[1, 1], [0, 0], [1, 1]]
    mask = fg.tensor([[True, False, True], [False, True, False]])
    assert fg.zeros(2, 3).masked_scatter(mask, fg.arange(6.0)).tolist() == [[0, 0, 1], [0, 2, 0]]
    t = fg.zeros(2, 3)
    t.masked_scatter_(mask, fg.arange(6.0))
    assert t.tolist() == [[0, 0, 1], [0, 2, 0]] and t._version == 1
    assert fg.bincount(fg.tensor([1, 1, 3])).tolist() == [0, 2, 0, 1]
    assert fg.bincount(fg.tensor([1, 1, 3]), fg.tensor([0.5, 1.0, 2.0]), 6).tolist() == [0, 1.5, 0, 2, 0, 0]
    assert fg.histc(fg.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist() == [0.0, 2.0, 1.0, 0.0]
    assert [p.tolist() for p in fg.vsplit(fg.arange(6).reshape(2, 3), [1])] == [[[0, 1, 2]], [[3, 4, 5]]]
    with pytest.raises(RuntimeError, match="not divisible"):
        fg.hsplit(fg.ones(2, 3), 2)
    y = fg.arange(12.0).reshape(3, 4)
    assert y[1:].storage_offset() == 4 and y[:, 2].storage_offset() == 2 and y.t().storage_offset() == 0
    assert y[1:].data_ptr() - y.data_ptr() == 4 * y.element_size()
    assert y.is_same_size(fg.zeros(3, 4)) and not y.is_same_size(fg.zeros(4, 3))
    with pytest.raises(RuntimeError, match="is not expandable to size"):
        y.sum_to_size(2, 4)


def test_type_names_and_memory_predicates() -> None:
    x = fg.ones(2, dtype=np.float32)
    assert x.type() == "torch.FloatTensor" and fg.ones(1).type() == "torch.DoubleTensor"
    assert x.type("torch.LongTensor").dtype == np.int64 and x.type(np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="invalid type: 'torch.FooTensor'"):
        x.type("torch.FooTensor")
    assert not x.is_cuda and x.is_cpu and not x.is_sparse and not x.is_quantized and not x.is_pinned()
    assert x.pin_memory() is x and x.share_memory_() is x


@settings(max_examples=examples(40), deadline=None)
@given(a=hnp.arrays(np.float64, st.integers(1, 8), elements=_floats, unique=True), q=st.floats(0.0, 1.0))
def test_quantile_and_median_gradients_are_weights_summing_to_one(a: np.ndarray, q: float) -> None:
    for statistic in (lambda t: fg.quantile(t, q), fg.median, lambda t: fg.nanquantile(t, q, interpolation="midpoint")):
        x = fg.tensor(a, requires_grad=True)
        out = statistic(x)
        (g,) = fg.autograd.grad(out, x)
        assert np.all(g.data >= 0) and math.isclose(g.data.sum(), 1.0)
        assert a.min() <= out.item() <= a.max()
        np.testing.assert_allclose(out.item(), (g.data * a).sum(), atol=1e-9)  # a weighted mean of the values


@settings(max_examples=examples(40), deadline=None)
@given(a=hnp.arrays(np.float64, 5, elements=_floats), b=hnp.arrays(np.float64, 5, elements=_floats),
       w=st.floats(0.0, 1.0))
def test_lerp_stays_between_its_ends_and_its_gradients_are_the_weights(a: np.ndarray, b: np.ndarray, w: float) -> None:
    x, y = fg.tensor(a, requires_grad=True), fg.tensor(b, requires_grad=True)
    out = fg.lerp(x, y, w)
    assert np.all(out.data >= np.minimum(a, b) - 1e-12) and np.all(out.data <= np.maximum(a, b) + 1e-12)
    gx, gy = fg.autograd.grad(out.sum(), (x, y))
    np.testing.assert_allclose(gx.data, 1 - w)
    np.testing.assert_allclose(gy.data, w)


# every differentiable composition above: first derivatives in reverse and forward mode, second derivatives
ALL_CASES = {**CASES, **ALIAS_CASES, **STAT_CASES, **SELECTION_CASES}
assert len(ALL_CASES) == len(CASES) + len(ALIAS_CASES) + len(STAT_CASES) + len(SELECTION_CASES)  # no name twice


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_first_derivatives_reverse_and_forward(name: str) -> None:
    fn, inputs = ALL_CASES[name]
    assert gradcheck(fn, inputs, check_forward_ad=True)


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_second_derivatives(name: str) -> None:
    fn, inputs = ALL_CASES[name]
    assert gradgradcheck(fn, inputs)
