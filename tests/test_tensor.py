"""Tensor: factories, dtype rules, attributes, NumPy interop, operators, repr, detach and clone."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import funcgrad as fg


def leaf(*values: float) -> fg.Tensor:
    return fg.tensor(list(values), requires_grad=True)


# ----- factories ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("make", "expected"), [
    (lambda: fg.zeros(2, 3), np.zeros((2, 3))),
    (lambda: fg.zeros((2, 3)), np.zeros((2, 3))),
    (lambda: fg.ones(2), np.ones(2)),
    (lambda: fg.full((2, 2), 3.5), np.full((2, 2), 3.5)),
    (lambda: fg.eye(3), np.eye(3)),
    (lambda: fg.eye(2, 3), np.eye(2, 3)),
    (lambda: fg.arange(4), np.arange(4)),
    (lambda: fg.arange(1, 7, 2), np.array([1, 3, 5])),
    (lambda: fg.arange(0, 1, 0.25), np.array([0.0, 0.25, 0.5, 0.75])),
    (lambda: fg.linspace(0, 1, 5), np.array([0.0, 0.25, 0.5, 0.75, 1.0])),
    (lambda: fg.tensor([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]])),
])
def test_factory_values_and_dtypes(make, expected) -> None:
    t = make()
    assert isinstance(t, fg.Tensor)
    assert t.dtype == expected.dtype
    np.testing.assert_array_equal(t.data, expected)
    assert t.is_leaf and not t.requires_grad and t.grad is None and t.grad_fn is None


def test_empty_has_shape_and_default_float64() -> None:
    t = fg.empty(2, 3)
    assert t.shape == (2, 3) and t.dtype == np.float64


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factories_take_dtype_and_requires_grad(name: str) -> None:
    t = getattr(fg, name)(2, 3, dtype=np.float32, requires_grad=True)
    assert t.shape == (2, 3) and t.dtype == np.float32 and t.requires_grad and t.is_leaf


@pytest.mark.parametrize(("like", "args", "value"), [
    (fg.zeros_like, (), 0.0), (fg.ones_like, (), 1.0), (fg.full_like, (7.0,), 7.0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_like_factories_copy_shape_and_dtype(like, args, value, dtype) -> None:
    src = fg.tensor(np.arange(6.0).reshape(2, 3), dtype=dtype, requires_grad=True)
    t = like(src, *args)
    assert t.shape == (2, 3) and t.dtype == dtype and not t.requires_grad
    np.testing.assert_array_equal(t.data, np.full((2, 3), value, dtype))


def test_tensor_copies_its_data_from_numpy_and_as_tensor_share() -> None:
    a = np.array([1.0, 2.0])
    copied, shared, wrapped = fg.tensor(a), fg.from_numpy(a), fg.as_tensor(a)
    a[0] = 9.0
    assert copied.tolist() == [1.0, 2.0]
    assert shared.tolist() == [9.0, 2.0] and wrapped.tolist() == [9.0, 2.0]


@pytest.mark.parametrize("sample", [fg.rand, fg.randn])
def test_random_factories_are_reproducible_with_seed_and_generator(sample) -> None:
    a, b = sample(4, seed=3), sample(4, seed=3)
    np.testing.assert_array_equal(a.data, b.data)
    assert not np.array_equal(a.data, sample(4, seed=4).data)
    g1, g2 = fg.Generator(5), fg.Generator(5)
    first = sample(3, generator=g1)
    np.testing.assert_array_equal(first.data, sample(3, generator=g2).data)
    # a generator advances: the next draw differs, until it is re-seeded
    assert not np.array_equal(first.data, sample(3, generator=g1).data)
    np.testing.assert_array_equal(first.data, sample(3, generator=g1.manual_seed(5)).data)


def test_rand_is_uniform_in_unit_interval_and_randn_is_standard_normal() -> None:
    u = fg.rand(20000, seed=0).data
    n = fg.randn(20000, seed=0).data
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.01
    assert abs(n.mean()) < 0.03 and abs(n.std() - 1.0) < 0.03


def test_rand_like_and_randn_like_keep_shape_and_dtype() -> None:
    src = fg.zeros(2, 5, dtype=np.float32)
    for like in (fg.rand_like, fg.randn_like):
        t = like(src)
        assert t.shape == (2, 5) and t.dtype == np.float32


# ----- dtype rules -------------------------------------------------------------------------------
@pytest.mark.parametrize(("data", "dtype"), [(1.5, np.float64), (1, np.int64), ([1.0, 2.0], np.float64),
                                              (True, np.bool_)])
def test_tensor_dtype_follows_numpy(data, dtype) -> None:
    assert fg.tensor(data).dtype == dtype


@pytest.mark.parametrize(("dtype", "complex_", "floating"), [(np.float64, False, True), (np.float32, False, True),
                                                            (np.complex128, True, False), (np.int64, False, False),
                                                            (np.bool_, False, False)])
def test_dtype_predicates_answer_as_torch(dtype, complex_, floating) -> None:
    t = fg.zeros(2, dtype=dtype)
    assert t.is_complex() is complex_ and t.is_floating_point() is floating


@pytest.mark.parametrize("scalar", [2, 2.5, -1.0])
def test_float32_stays_float32_with_python_scalars(scalar) -> None:
    x = fg.tensor([1.0, 2.0], dtype=np.float32, requires_grad=True)
    for y in (x * scalar, scalar * x, x + scalar, scalar - x, x / scalar, x ** 2):
        assert y.dtype == np.float32
    (x * scalar).sum().backward()
    assert x.grad.dtype == np.float32


def test_gradient_has_the_leaf_dtype_after_promotion() -> None:
    x = fg.tensor([1.0, 2.0], dtype=np.float32, requires_grad=True)
    y = x * np.array([3.0, 4.0])  # float64 result, as NumPy promotes
    assert y.dtype == np.float64
    y.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.data, [3.0, 4.0])


@pytest.mark.parametrize("make", [
    lambda: fg.tensor([1, 2], requires_grad=True),
    lambda: fg.tensor([1, 2]).requires_grad_(),
    lambda: fg.arange(3, requires_grad=True),
    lambda: fg.zeros(2, dtype=np.int32, requires_grad=True),
    lambda: fg.tensor([True], requires_grad=True),
])
def test_only_floating_tensors_can_require_grad(make) -> None:
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require"):
        make()


def test_integer_results_do_not_require_grad() -> None:
    x = leaf(1.5, 2.5)
    assert not (x // 1).requires_grad


# ----- attributes --------------------------------------------------------------------------------
def test_shape_attributes() -> None:
    t = fg.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.dim() == 3
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4 and t.numel() == 24
    assert t.dtype == np.float64 and len(t) == 2


def test_T_and_mT() -> None:
    m = fg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    np.testing.assert_array_equal(m.T.data, m.data.T)
    b = fg.tensor(np.arange(24.0).reshape(2, 3, 4))
    assert b.T.shape == (4, 3, 2) and b.mT.shape == (2, 4, 3)
    np.testing.assert_array_equal(b.mT.data, np.swapaxes(b.data, -1, -2))
    (m.T * fg.tensor([[1.0, 2.0]])).sum().backward()  # grad flows back through the transpose
    np.testing.assert_array_equal(m.grad.data, [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])


def test_autograd_attributes_of_leaf_and_non_leaf() -> None:
    x = leaf(1.0, 2.0)
    assert x.is_leaf and x.requires_grad and x.grad_fn is None and x.grad is None
    assert x.output_nr == 0 and x._version == 0 and not x.is_view and x._base is None
    assert not x.retains_grad
    y = x * 2
    assert not y.is_leaf and y.requires_grad and y.grad_fn.name() == "MulBackward0"
    assert y.output_nr == 0 and not y.retains_grad
    y.retain_grad()
    assert y.retains_grad
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad = False
    plain = fg.ones(2)
    assert plain.is_leaf and not plain.requires_grad


def test_requires_grad_setter_and_requires_grad_() -> None:
    t = fg.ones(2)
    assert t.requires_grad_() is t and t.requires_grad
    t.requires_grad = False
    assert not t.requires_grad
    assert not (t * 2).requires_grad


# ----- NumPy interop and Python conversions ------------------------------------------------------
def test_item_tolist_numpy_and_array_protocol() -> None:
    t = fg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert fg.tensor([2.5]).item() == 2.5 and isinstance(fg.tensor(3).item(), int)
    assert float(fg.tensor(1.5)) == 1.5 and int(fg.tensor(7)) == 7
    assert t.numpy() is t.data
    arr = np.asarray(t)
    assert isinstance(arr, np.ndarray) and np.shares_memory(arr, t.data)
    np.testing.assert_array_equal(np.array(t, dtype=np.float32), t.data.astype(np.float32))
    assert np.array(t, dtype=np.float32).dtype == np.float32
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        t.item()


def test_numpy_of_a_tensor_that_requires_grad_says_detach() -> None:
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        x.numpy()
    np.testing.assert_array_equal(x.detach().numpy(), [1.0])
    for convert in (np.asarray, np.array, np.asanyarray):  # no silent cut of the graph either
        with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
            convert(x)
    with fg.no_grad():  # allowed with grad mode off, as torch
        assert x.numpy() is x.data
        np.testing.assert_array_equal(np.asarray(x), [1.0])


# ----- operators ---------------------------------------------------------------------------------
OTHERS = {
    "int": 2, "float": 2.0, "np.float64": np.float64(2.0), "np.int64": np.int64(2),
    "ndarray": np.array([2.0, 3.0]),
}
BINARY = {
    "add": (lambda a, b: a + b, lambda x, c: np.ones_like(x)),
    "sub": (lambda a, b: a - b, lambda x, c: np.ones_like(x)),
    "mul": (lambda a, b: a * b, lambda x, c: c * np.ones_like(x)),
    "truediv": (lambda a, b: a / b, lambda x, c: 1 / c * np.ones_like(x)),
    "pow": (lambda a, b: a ** b, lambda x, c: c * x ** (c - 1)),
}
REFLECTED = {
    "radd": (lambda a, b: b + a, lambda x, c: np.ones_like(x)),
    "rsub": (lambda a, b: b - a, lambda x, c: -np.ones_like(x)),
    "rmul": (lambda a, b: b * a, lambda x, c: c * np.ones_like(x)),
    "rtruediv": (lambda a, b: b / a, lambda x, c: -c / x ** 2),
    "rpow": (lambda a, b: b ** a, lambda x, c: np.log(c) * c ** x),
}


@pytest.mark.parametrize("other", OTHERS.values(), ids=OTHERS.keys())
@pytest.mark.parametrize("op", [*BINARY.values(), *REFLECTED.values()], ids=[*BINARY, *REFLECTED])
def test_operators_with_scalars_and_arrays_on_either_side(op, other) -> None:
    forward, derivative = op
    x = leaf(1.5, 2.5)
    y = forward(x, other)
    assert isinstance(y, fg.Tensor) and y.requires_grad and y.grad_fn is not None
    c = np.asarray(other, dtype=np.float64)
    np.testing.assert_allclose(y.data, forward(x.data, c))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, derivative(x.data, c))


def test_tensor_tensor_operators_and_unary() -> None:
    x, y = leaf(1.0, -2.0), leaf(3.0, 4.0)
    ((x * y - x / y + x ** 2) + (-x) + abs(x)).sum().backward()
    np.testing.assert_allclose(x.grad.data, y.data - 1 / y.data + 2 * x.data - 1 + np.sign(x.data))
    np.testing.assert_allclose(y.grad.data, x.data + x.data / y.data ** 2)


def test_floordiv_and_mod_values() -> None:
    x = leaf(7.5, -2.5)
    np.testing.assert_array_equal((x // 2).data, [3.0, -2.0])
    np.testing.assert_array_equal((x % 2).data, [1.5, 1.5])
    (x % 2).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [1.0, 1.0])  # d(x mod c)/dx = 1 almost everywhere


@pytest.mark.parametrize(("compare", "expected"), [
    (lambda x: x < 2.0, [True, False, False]), (lambda x: x <= 2.0, [True, True, False]),
    (lambda x: x > 2.0, [False, False, True]), (lambda x: x >= 2.0, [False, True, True]),
    (lambda x: x == 2.0, [False, True, False]), (lambda x: x != 2.0, [True, False, True]),
    (lambda x: 2.0 > x, [True, False, False]), (lambda x: np.float64(2.0) <= x, [False, True, True]),
    (lambda x: x < np.array([2.0, 2.0, 4.0]), [True, False, True]),
])
def test_comparisons_give_bool_tensors_without_grad(compare, expected) -> None:
    x = leaf(1.0, 2.0, 3.0)
    r = compare(x)
    assert isinstance(r, fg.Tensor) and r.dtype == np.bool_
    assert not r.requires_grad and r.grad_fn is None
    assert r.tolist() == expected


# ----- repr --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("make", "text"), [
    (lambda: fg.tensor([1.0, 2.0]), "tensor([1., 2.])"),
    (lambda: leaf(1.0, 2.0), "tensor([1., 2.], requires_grad=True)"),
    (lambda: leaf(1.0, 2.0) * 1, "tensor([1., 2.], grad_fn=<MulBackward0>)"),
    (lambda: leaf(1.0, 2.0) + 1, "tensor([2., 3.], grad_fn=<AddBackward0>)"),
    (lambda: leaf(1.0, 2.0).sum(), "tensor(3., grad_fn=<SumBackward0>)"),
    (lambda: fg.tensor(1.5), "tensor(1.5)"),
    (lambda: fg.tensor([1, 2]), "tensor([1, 2])"),
    (lambda: fg.tensor([1.0, 2.0], dtype=np.float32), "tensor([1., 2.], dtype=float32)"),
    (lambda: fg.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
])
def test_repr(make, text) -> None:
    assert repr(make()) == text


# ----- detach, detach_, clone --------------------------------------------------------------------
def test_detach_shares_memory_and_version_but_not_history() -> None:
    x = leaf(1.0, 2.0)
    y = x * 2
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None
    assert np.shares_memory(d.data, y.data)
    with fg.no_grad():
        y.mul_(2)
    assert d._version == y._version == 1 and d.tolist() == [4.0, 8.0]


def test_detach_in_place_cuts_history() -> None:
    x = leaf(1.0, 2.0)
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    assert repr(y) == "tensor([2., 4.])"


def test_clone_copies_memory_and_is_differentiable() -> None:
    x = leaf(1.0, 2.0)
    c = x.clone()
    assert c.grad_fn.name() == "CloneBackward0" and not np.shares_memory(c.data, x.data)
    c.data[0] = 5.0
    assert x.tolist() == [1.0, 2.0]
    (c * c).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [10.0, 4.0])
    plain = fg.tensor([3.0]).clone()
    assert plain.is_leaf and not plain.requires_grad and plain.tolist() == [3.0]


@pytest.mark.parametrize("data, name", [([1, "a"], "str"), ("a", "str"), ([b"x"], "bytes"), ([1.0, None], "NoneType"),
                                        (np.array([1.0], dtype=object), "object")])
def test_tensor_of_non_numbers_is_a_type_error(data, name) -> None:
    with pytest.raises(TypeError, match=rf"tensor\(\): invalid data type '{name}'"):
        fg.tensor(data)
    with pytest.raises(TypeError, match=rf"as_tensor\(\): invalid data type '{name}'"):
        fg.as_tensor(data)


# ----- pickle and deepcopy ---------------------------------------------------------------------------
def test_deepcopy_of_a_leaf_keeps_values_dtype_requires_grad_and_grad() -> None:
    x = fg.tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    (x * x).sum().backward()
    c = copy.deepcopy(x)
    assert c is not x and c.is_leaf and c.requires_grad and c.dtype == np.float32
    np.testing.assert_array_equal(c.data, x.data)
    np.testing.assert_array_equal(c.grad.data, [2.0, 4.0])
    assert not np.shares_memory(c.data, x.data) and c.grad is not x.grad
    (c * 3).sum().backward()  # the copy is a leaf of its own
    np.testing.assert_array_equal(c.grad.data, [5.0, 7.0])
    np.testing.assert_array_equal(x.grad.data, [2.0, 4.0])
    pair = copy.deepcopy([x, x])
    assert pair[0] is pair[1]  # the memo keeps identities


@pytest.mark.parametrize("make", [lambda x: x * 2, lambda x: x[:1], lambda x: x.exp()])
def test_deepcopy_of_a_non_leaf_raises(make) -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match=r"Only Tensors created explicitly by the user \(graph leaves\) support "
                                           "the deepcopy protocol"):
        copy.deepcopy(make(x))
    with fg.no_grad():
        assert copy.deepcopy(make(x)).is_leaf  # made without history: a leaf, as torch


def test_pickle_keeps_values_dtype_and_requires_grad_of_leaves_views_and_results() -> None:
    x = fg.tensor(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    (x * x).sum().backward()  # x now has a .grad and an AccumulateGrad (a weak reference)
    y = x * 2
    view = fg.tensor([[1.0, 2.0], [3.0, 4.0]])[:, 1]
    back_x, back_y, back_view = pickle.loads(pickle.dumps([x, y, view]))
    assert back_x.requires_grad and back_x.is_leaf and back_x.dtype == np.float32 and back_x.grad is None  # as torch
    np.testing.assert_array_equal(back_x.data, x.data)
    assert back_y.requires_grad and back_y.is_leaf  # a result comes back as a leaf, as torch
    np.testing.assert_array_equal(back_y.data, [2.0, 4.0, 6.0])
    assert back_view.tolist() == [2.0, 4.0] and not back_view.is_view and not back_view.requires_grad


def test_a_number_times_a_tensor_records_the_tensor_first_as_torch() -> None:
    """``2 * t`` and ``2 + t`` record ``mul(t, 2)`` and ``add(t, 2)``, as torch: the Tensor's edge comes first in
    ``next_functions``; ``2 - t`` and ``2 / t`` keep their order (not commutative)."""
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    for y in (2 * x, 2.5 + x):
        assert [node is not None for node, _ in y.grad_fn.next_functions] == [True, False]
    for y in (2 - x, 2 / x):
        assert [node is not None for node, _ in y.grad_fn.next_functions] == [False, True]
    (2 * x + 3 / x).sum().backward()
    np.testing.assert_allclose(x.grad.data, 2 - 3 / x.data ** 2)
