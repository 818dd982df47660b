"""In-place operations and views: versions, history rewriting through views, saved-tensor safety."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import funcgrad as fg


def leaf(*values: float) -> fg.Tensor:
    return fg.tensor(list(values), requires_grad=True)


def test_inplace_bumps_version_and_rewrites_history() -> None:
    a = leaf(1.0, 2.0, 3.0)
    x = a * 1
    assert x._version == 0
    x.mul_(a)
    assert x._version == 1 and x.grad_fn.name() == "MulBackward0"
    x.sum().backward()
    np.testing.assert_allclose(a.grad.data, 2 * a.data)


def test_inplace_operators_record_history() -> None:
    a = leaf(1.0, 2.0)
    x = a + 0
    x += a
    x *= 3
    x.sum().backward()
    np.testing.assert_allclose(a.grad.data, [6.0, 6.0])


def test_inplace_on_leaf_that_requires_grad_raises_and_state_is_intact() -> None:
    a = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        a.add_(1)
    assert a._version == 0 and a.grad_fn is None
    with fg.no_grad():
        a.add_(1)
    assert a._version == 1
    np.testing.assert_allclose(a.data, [2.0, 3.0])


def test_inplace_through_view_chain_rewrites_base_history() -> None:
    a = leaf(1.0, 2.0, 3.0, 4.0)
    y = leaf(5.0, 6.0)
    x = a * 1
    t = fg.reshape(x, (2, 2)).T
    t.mul_(y)  # t[r, c] *= y[c], i.e. x[2c + r] *= y[c]
    np.testing.assert_allclose(x.data, [5.0, 10.0, 18.0, 24.0])
    assert x.grad_fn.name() == "CopySlicesBackward0" and x._version == t._version == 1
    (x * fg.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    np.testing.assert_allclose(a.grad.data, [5.0, 10.0, 18.0, 24.0])
    np.testing.assert_allclose(y.grad.data, [1 * 1 + 2 * 2, 3 * 3 + 4 * 4])


def test_other_views_see_the_new_history() -> None:
    a = leaf(1.0, 2.0, 3.0, 4.0)
    x = a * 1
    v1 = fg.reshape(x, (2, 2))
    v2 = fg.transpose(v1, 0, 1)
    v1.mul_(2.0)  # v2 was made before the change; its history must now include it
    v2.sum().backward()
    np.testing.assert_allclose(a.grad.data, [2.0, 2.0, 2.0, 2.0])


def test_a_base_viewed_many_times_keeps_only_its_live_views() -> None:
    """A parameter viewed once per step (``W.T``) must not collect a reference per view ever made; the views
    still alive keep getting the base's new history."""
    a = leaf(1.0, 2.0, 3.0, 4.0)
    x = a * 1
    kept = [fg.reshape(x, (2, 2)) for _ in range(5)]
    for _ in range(1000):
        fg.reshape(x, (4, 1)).sum()
    assert len(x._extra.views) < 64
    x.mul_(3.0)  # every kept view now sees the change
    sum(v.sum() for v in kept).backward()
    np.testing.assert_allclose(a.grad.data, [15.0, 15.0, 15.0, 15.0])


def test_inplace_on_view_of_leaf_requiring_grad_raises() -> None:
    a = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        fg.reshape(a, (2, 1)).mul_(2.0)


def test_changed_saved_tensor_raises_with_versions() -> None:
    a = leaf(1.0, 2.0)
    x = a * 1
    y = fg.exp(x)  # saves its output
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*ExpBackward0.*shape \[2\].*"
                                           r"version 1; expected version 0"):
        y.sum().backward()
    z = fg.sin(a)  # the library still works
    z.sum().backward()
    np.testing.assert_allclose(a.grad.data, np.cos(a.data))


def test_optimizer_style_update_under_no_grad() -> None:
    w = leaf(1.0, 2.0)
    (w * w).sum().backward()
    with fg.no_grad():
        w.sub_(0.5 * w.grad)
    np.testing.assert_allclose(w.data, [0.0, 0.0])
    assert w.requires_grad and w.is_leaf


def test_fill_zero_copy_record_history() -> None:
    a = leaf(1.0, 2.0)
    b = leaf(3.0, 4.0)
    x = a * 2
    x.copy_(b * b)
    x.sum().backward()
    np.testing.assert_allclose(a.grad.data, [0.0, 0.0])  # overwritten: zero gradient, as torch
    np.testing.assert_allclose(b.grad.data, 2 * b.data)
    z = a * 1
    z.zero_()
    (z + a).sum().backward()
    np.testing.assert_allclose(a.grad.data, [1.0, 1.0])


def test_shape_mismatch_in_place_raises() -> None:
    x = fg.zeros(3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x.add_(fg.zeros(2, 3))


def test_broadcast_view_cannot_be_written() -> None:
    x = fg.broadcast_to(fg.zeros(1), (3,))
    with pytest.raises(RuntimeError, match="single memory location"):
        x.add_(1.0)


@pytest.mark.parametrize("index", [lambda i: i, lambda i: (i,), lambda i: (i, None)], ids=["tensor", "tuple", "mixed"])
def test_an_index_tensor_changed_after_indexing_raises(index: Any) -> None:
    """As torch: the rule of x[i] reads i, so changing i in place before the backward is caught, not a wrong
    gradient (x.grad was [0, 1, 1, 0, 0] instead of [1, 1, 0, 0, 0])."""
    x = leaf(0.0, 1.0, 2.0, 3.0, 4.0)
    i = fg.tensor([0, 1])
    y = x[index(i)]
    i.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*GetitemBackward0"):
        y.sum().backward()


def test_an_index_tensor_changed_after_index_put_raises() -> None:
    x = leaf(0.0, 1.0, 2.0)
    z = x * 1
    i = fg.tensor([0, 1])
    z[i] = fg.tensor([7.0, 7.0])
    i.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation"):
        z.sum().backward()


def test_an_unchanged_index_tensor_gives_the_gradient() -> None:
    x = leaf(0.0, 1.0, 2.0, 3.0)
    i = fg.tensor([0, 1, 1])
    (x[i] * fg.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(x.grad.data, [1.0, 5.0, 0.0, 0.0])


IN_PLACE_FORMS = {  # method: the extra arguments (torch's in-place forms of table ops)
    "masked_fill_": (fg.tensor([[True, False, True], [False, False, True]]), 0.5),
    "scatter_": (1, fg.tensor([[2, 0], [1, 1]]), fg.tensor([[7.0, 8.0], [9.0, 10.0]])),
    "scatter_add_": (1, fg.tensor([[2, 0], [1, 1]]), fg.tensor([[7.0, 8.0], [9.0, 10.0]])),
    "log1p_": (), "expm1_": (), "square_": (), "rsqrt_": (), "erf_": (), "tan_": (), "asin_": (), "atan_": (),
    "log2_": (), "log10_": (), "trunc_": (), "sgn_": (), "exp2_": (),
}


@pytest.mark.parametrize("method", list(IN_PLACE_FORMS))
def test_in_place_forms_match_their_ops(method: str) -> None:
    """``y.<op>_(...)`` writes ``<op>(y, ...)`` into y and records it: the same values and gradients."""
    args = IN_PLACE_FORMS[method]
    x = fg.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], requires_grad=True)
    y = x * 1.0
    out = getattr(y, method)(*args)
    assert out is y and y._version == 1
    expected = getattr(fg, method[:-1])(x * 1.0, *args)
    np.testing.assert_array_equal(y.data, expected.data)
    (gy,) = fg.autograd.grad((y * y).sum(), x)
    (ge,) = fg.autograd.grad((expected * expected).sum(), x)
    np.testing.assert_allclose(gy.data, ge.data, rtol=1e-15)


def test_t_transposes_a_matrix_and_refuses_more_dimensions() -> None:
    """torch's ``Tensor.t``: a matrix transposed (a view), a vector or a scalar as it is, 3-D refused."""
    x = fg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    np.testing.assert_array_equal(x.t().data, x.data.T)
    assert x.t()._base is x
    assert fg.ones(3).t().shape == (3,)
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        fg.ones(2, 3, 4).t()
