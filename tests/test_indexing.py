"""Indexing, joining and splitting: accumulation at repeated indices, ``__setitem__``, views,
batched gradients, splitting into views, error messages, and getitem against NumPy (hypothesis)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.check import gradcheck
from tests.budget import examples


def leaf(*shape: int, seed: int = 0) -> fg.Tensor:
    return fg.tensor(np.random.default_rng(seed).normal(size=shape), requires_grad=True)


# ----- repeated indices accumulate ------------------------------------------------------------
def test_repeated_advanced_indices_accumulate() -> None:
    x = leaf(4)
    x[[0, 0, 3, 0]].sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 0.0, 0.0, 1.0])


def test_scatter_add_and_accumulating_index_put_add_repeats() -> None:
    x, src = leaf(3), leaf(4, seed=1)
    out = fg.scatter_add(x, 0, fg.tensor([2, 2, 0, 2]), src)
    np.testing.assert_allclose(out.data, x.data + [src.data[2], 0.0, src.data[[0, 1, 3]].sum()])
    values = leaf(3, seed=2)
    put = fg.index_put(x, (np.array([1, 1, 1]),), values, accumulate=True)
    np.testing.assert_allclose(put.data[1], x.data[1] + values.data.sum())
    (out.sum() + (put * 2).sum()).backward()
    np.testing.assert_array_equal(src.grad.data, np.ones(4))
    np.testing.assert_array_equal(values.grad.data, np.full(3, 2.0))
    np.testing.assert_array_equal(x.grad.data, np.full(3, 3.0))


def test_gather_backward_adds_up_repeats() -> None:
    x = leaf(2, 3)
    fg.gather(x, 1, fg.tensor([[0, 0, 0], [2, 1, 2]])).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [[3.0, 0.0, 0.0], [0.0, 1.0, 2.0]])


# ----- __setitem__ ----------------------------------------------------------------------------
def test_setitem_on_a_non_leaf_records_history() -> None:
    x, v = leaf(5), leaf(2, seed=1)
    y = x * 1
    y[1:3] = v
    np.testing.assert_array_equal(y.data[1:3], v.data)
    assert y._version == 1 and y.grad_fn.name() == "IndexPutBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [1.0, 0.0, 0.0, 1.0, 1.0])
    np.testing.assert_array_equal(v.grad.data, [1.0, 1.0])


def test_setitem_broadcasts_a_scalar_tensor_and_sums_its_gradient() -> None:
    x, v = leaf(2, 3), fg.tensor(2.0, requires_grad=True)
    y = x * 3
    y[:, np.array([True, False, True])] = v
    (y * y).sum().backward()
    np.testing.assert_allclose(v.grad.data, 4 * 2.0 * 2)
    np.testing.assert_allclose(x.grad.data[:, 1], 18 * x.data[:, 1])
    np.testing.assert_array_equal(x.grad.data[:, [0, 2]], 0.0)


def test_setitem_on_a_leaf_that_requires_grad_raises_except_under_no_grad() -> None:
    x = leaf(3)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 1.0
    with fg.no_grad():
        x[0] = 1.0
    assert x.data[0] == 1.0 and x._version == 1 and x.grad_fn is None


# ----- views ----------------------------------------------------------------------------------
@pytest.mark.parametrize("view", [lambda x: x[1], lambda x: x[:, 1:], lambda x: x[None, ..., 0],
                                  lambda x: x[1, 2], lambda x: fg.narrow(x, 1, 1, 2),
                                  lambda x: fg.select(x, -1, 0), lambda x: fg.split(x, 2, 1)[1]])
def test_basic_indexing_and_narrowing_give_views_sharing_the_version(view: Callable[[Any], Any]) -> None:
    x = fg.zeros(3, 4)
    v = view(x)
    assert v._base is x and np.shares_memory(v.data, x.data)
    v[...] = 7.0
    assert x._version == v._version == 1 and (x.data == 7.0).sum() == v.data.size


def test_advanced_indexing_copies() -> None:
    x = fg.zeros(3, 4)
    v = x[[0, 2]]
    assert v._base is None and not np.shares_memory(v.data, x.data)


# ----- splitting ------------------------------------------------------------------------------
@pytest.mark.parametrize(("split", "name", "shapes"), [
    (lambda x: fg.split(x, [1, 4]), "SplitBackward0", [(1, 2), (4, 2)]),
    (lambda x: fg.split(x, 2), "SplitBackward0", [(2, 2), (2, 2), (1, 2)]),
    (lambda x: fg.chunk(x, 2, dim=0), "SplitBackward0", [(3, 2), (2, 2)]),
    (lambda x: x.unbind(1), "UnbindBackward0", [(5,), (5,)]),
])
def test_split_chunk_unbind_give_one_node_with_one_output_per_piece(split, name, shapes) -> None:
    x = leaf(5, 2)
    y = x * 1
    pieces = split(y)
    assert [p.shape for p in pieces] == shapes
    node = pieces[0].grad_fn
    assert node.name() == name and all(p.grad_fn is node for p in pieces)  # one node, as torch
    assert [p.output_nr for p in pieces] == list(range(len(pieces)))
    assert node.next_functions == ((y.grad_fn, 0),)
    assert all(p._base is y for p in pieces)
    sum(float(k + 1) * p.sum() for k, p in enumerate(pieces) if k != 1).backward()  # piece 1 gets no gradient
    weights = [0.0 if k == 1 else k + 1.0 for k in range(len(pieces))]
    join = np.stack if name == "UnbindBackward0" else np.concatenate
    expected = join([np.full(shape, w) for w, shape in zip(weights, shapes)], axis=1 if join is np.stack else 0)
    np.testing.assert_array_equal(x.grad.data, expected)


def test_cat_and_stack_route_gradients_to_each_input() -> None:
    a, b = leaf(2, 3), leaf(1, 3, seed=1)
    (fg.cat([a, b]) * fg.tensor([[1.0], [2.0], [3.0]])).sum().backward()
    np.testing.assert_array_equal(b.grad.data, np.full((1, 3), 3.0))
    np.testing.assert_array_equal(a.grad.data, [[1.0] * 3, [2.0] * 3])
    c = fg.tensor([1.0, 2.0])  # a constant in the sequence gets no gradient
    out = fg.stack([c, a[0, :2]], dim=1)
    assert out.shape == (2, 2)
    out.sum().backward()
    np.testing.assert_array_equal(a.grad.data[0], [2.0, 2.0, 1.0])


# ----- batched gradients (is_grads_batched) ---------------------------------------------------
BATCHED = {
    "getitem-basic": lambda x: x[1:, None, ::-1],
    "getitem-separated": lambda x: x[[0, 2, 2], 1:, [1, 0, 1]],
    "getitem-mask": lambda x: x[x.data > 0],
    "index_put": lambda x: fg.index_put(x * 1, (Ellipsis, np.array([1, 0])), x[:, :, :1] * 2),
    "narrow": lambda x: fg.narrow(x, -1, 1, 1),
    "select": lambda x: fg.select(x, 1, -1),
    "gather": lambda x: fg.gather(x, 1, fg.tensor(np.array([[[0], [1], [1]]] * 3))),
    "index_select": lambda x: fg.index_select(x, 0, fg.tensor([2, 2])),
    "take_along_dim": lambda x: fg.take_along_dim(x, fg.tensor([[[1, 0]]]), dim=2),
    "scatter": lambda x: fg.scatter(x * 2, 2, fg.tensor(np.zeros((3, 2, 1), int)), x[:, :2, :1]),
    "masked_fill": lambda x: fg.masked_fill(x, x.data > 0, x[0, 0, 0]),
    "pad-constant": lambda x: fg.pad(x, (1, -1, 2, 0)),
    "pad-reflect": lambda x: fg.pad(x, (1, 1), "reflect"),
    "cat": lambda x: fg.cat([x, x[:, :1] * 3], dim=1),
    "stack": lambda x: fg.stack([x, x * x], dim=-1),
}


@pytest.mark.parametrize("fn", BATCHED.values(), ids=BATCHED.keys())
@pytest.mark.parametrize("create_graph", [False, True])
def test_batched_gradients_equal_stacked_single_ones(fn: Callable[[Any], Any], create_graph: bool) -> None:
    x = leaf(3, 3, 2)
    out = fn(x)
    v = np.random.default_rng(1).normal(size=(4,) + out.shape)
    (batched,) = fg.autograd.grad(out, x, v, is_grads_batched=True, retain_graph=True, create_graph=create_graph)
    singles = [fg.autograd.grad(out, x, vi, retain_graph=True)[0].data for vi in v]
    np.testing.assert_allclose(batched.data, np.stack(singles))


# ----- forward mode --------------------------------------------------------------------------
FORWARD = {
    **BATCHED,
    "index_put-scalar": lambda x: fg.index_put(x * 2, (slice(1, None), np.array([0, 1])), 5.0),
    "masked_fill-scalar": lambda x: fg.masked_fill(x, x.data > 0, 0.5),
    "pad-value": lambda x: fg.pad(x, (1, 2), value=3.0),
    "scatter_add": lambda x: fg.scatter_add(x, 0, fg.tensor(np.ones((1, 3, 2), int)), x[:1] ** 2),
}


@pytest.mark.parametrize("fn", FORWARD.values(), ids=FORWARD.keys())
def test_forward_mode_agrees_with_reverse_mode(fn: Callable[[Any], Any]) -> None:
    """<v, J t> from a JVP equals <J^T v, t> from a VJP."""
    from funcgrad.autograd import forward_ad as fwAD

    x, t = leaf(3, 3, 2), np.random.default_rng(2).normal(size=(3, 3, 2))
    with fwAD.dual_level():
        jvp = fwAD.unpack_dual(fn(fwAD.make_dual(x, t))).tangent.data
    v = np.random.default_rng(3).normal(size=jvp.shape)
    (vjp,) = fg.autograd.grad(fn(x), x, v)
    np.testing.assert_allclose((v * jvp).sum(), (vjp.data * t).sum())


# ----- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("call, error, message", [
    (lambda x: x[5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x: x[:, [0, 4]], IndexError, "index 4 is out of bounds for dimension 1 with size 4"),
    (lambda x: fg.cat([x, fg.zeros(2, 3)]), RuntimeError, "Expected size 4 but got size 3 for tensor number 1"),
    (lambda x: fg.cat([x, fg.zeros(3)]), RuntimeError, "same number of dimensions: got 2 and 1"),
    (lambda x: fg.stack([x, x.T]), RuntimeError, r"got \[3, 4\] at entry 0 and \[4, 3\] at entry 1"),
    (lambda x: fg.gather(x, 0, fg.tensor([1])), RuntimeError, "same number of dimensions as input"),
    (lambda x: fg.gather(x, 0, fg.tensor([[3]])), RuntimeError, "index 3 is out of bounds for dimension 0"),
    (lambda x: fg.gather(x, 0, fg.tensor([[0] * 5])), RuntimeError, "no larger than self"),
    (lambda x: fg.index_select(x, 1, fg.tensor([-1])), RuntimeError, "index -1 is out of bounds"),
    (lambda x: fg.narrow(x, 0, 2, 2), RuntimeError, r"start \(2\) \+ length \(2\) exceeds dimension size \(3\)"),
    (lambda x: fg.select(x, 1, 4), IndexError, "index 4 out of range for tensor of size"),
    (lambda x: fg.split(x, [1, 1]), RuntimeError, "split_sizes to sum exactly to 3"),
    (lambda x: fg.pad(x, (1, 2, 3)), RuntimeError, "divisible by 2"),
    (lambda x: fg.pad(x, (4, 0), "reflect"), RuntimeError, "Padding size should be less than"),
    (lambda x: fg.pad(x, (1, 1), "wrap"), NotImplementedError, "Unrecognised padding mode wrap"),
    (lambda x: fg.masked_fill(x, x.data, 0.0), RuntimeError, "boolean masks"),
])
def test_bad_arguments_raise_like_torch(call: Callable[[Any], Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call(leaf(3, 4))


# ----- getitem against NumPy, with random basic indices ---------------------------------------
@st.composite
def basic_indices(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """A small shape and a basic index into it: ints, slices (any step sign), None and maybe an Ellipsis."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))

    def item(n: int) -> Any:
        bound = st.none() | st.integers(-n, n)
        return draw(st.integers(-n, n - 1) | st.builds(slice, bound, bound, st.sampled_from([None, 1, 2, -1])))

    front = draw(st.integers(0, len(shape)))
    back = draw(st.integers(0, len(shape) - front)) if draw(st.booleans()) else None  # dims named after an Ellipsis
    index = [item(n) for n in shape[:front]]
    if back is not None:
        index += [Ellipsis] + [item(n) for n in shape[len(shape) - back:]]
    for position in draw(st.lists(st.integers(0, len(index)), max_size=2)):
        index.insert(position, None)
    return shape, tuple(index)


@settings(max_examples=examples(40), deadline=None)
@given(basic_indices())
def test_getitem_matches_numpy_and_gradcheck(case: tuple[tuple[int, ...], tuple[Any, ...]]) -> None:
    shape, index = case
    x = leaf(*shape)
    out = x[index]
    np.testing.assert_array_equal(out.data, x.data[index])
    if out.data.size:  # an empty result shares no memory, so it is not marked as a view
        assert out._base is x
        assert gradcheck(lambda t: t[index], (x,))


SECOND_ORDER_INDEXING = {
    "getitem": lambda x, i: x[i],
    "getitem-tuple": lambda x, i: x[(i,)],
    "gather": lambda x, i: fg.gather(x, 0, i),
    "index_select": lambda x, i: fg.index_select(x, 0, i),
    "take_along_dim": lambda x, i: fg.take_along_dim(x, i, 0),
    "scatter": lambda x, i: fg.scatter(fg.zeros(4), 0, i, x[:2])[:2],
    "scatter_add": lambda x, i: fg.scatter_add(fg.zeros(4), 0, i, x[:2])[:2],
    "max_unpool": lambda x, i: fg.max_unpool(x[:2].reshape(1, 1, 2), i.reshape(1, 1, 2), (4,)).reshape(4)[:2],
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER_INDEXING))
def test_an_index_changed_between_the_first_and_the_second_backward_does_not_reach_it(name: str) -> None:
    """The first backward with create_graph reads the (version-checked) index; the graph it records must not
    keep a view of the index Tensor's memory, which a later in-place change would reach with no check (x[i] * v
    with i = [0, 2]: d/dv of grad_x . w gave w[[1, 3]] after i.add_(1), not w[[0, 2]])."""
    op = SECOND_ORDER_INDEXING[name]
    grads = []
    for change in (False, True):
        x = fg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        v = fg.tensor([1.0, 1.0], requires_grad=True)
        i = fg.tensor([0, 2])
        (gx,) = fg.autograd.grad((op(x, i) * v).sum(), x, create_graph=True)
        if change:
            with fg.no_grad():
                i.add_(1)
        (gv,) = fg.autograd.grad((gx * fg.tensor([1.0, 2.0, 3.0, 4.0])).sum(), v)
        grads.append(gv.data)
    np.testing.assert_array_equal(grads[0], grads[1])


def test_an_empty_list_index_selects_nothing_as_numpy_and_torch() -> None:
    """``x[[]]`` is empty along that dim (``np.asarray([])`` is a float array, which NumPy refuses as an index)."""
    x = fg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    assert x[[]].shape == (0, 4) and x[:, []].shape == (3, 0)
    x[[]].sum().backward()
    np.testing.assert_array_equal(x.grad.data, np.zeros((3, 4)))
    y = x.detach().clone()
    y[[]] = 5.0
    np.testing.assert_array_equal(y.data, np.arange(12.0).reshape(3, 4))
