"""Differences from PyTorch found in code written for torch, each fixed and kept fixed: the expected value or error
is asserted as it is (without torch), and compared with torch itself where torch is installed."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.autograd import grad


# ----- copysign: the sign's source gets a zero gradient, not none ------------------------------------------------
def _copysign_grads(lib: Any, x: list[float], other: list[list[float]]) -> list[np.ndarray]:
    """First and second derivatives of sum(copysign(x, other)) with respect to both inputs, by ``lib``'s grad
    (``lib`` is funcgrad or torch)."""
    a = lib.tensor(np.array(x), requires_grad=True)
    b = lib.tensor(np.array(other), requires_grad=True)
    first = lib.autograd.grad(lib.copysign(a, b).sum(), (a, b), create_graph=True)
    second = lib.autograd.grad(first[0].sum(), (a, b))
    return [np.asarray(g.detach().numpy()) for g in first + second]


def test_copysign_gives_other_a_zero_gradient_of_first_and_second_order() -> None:
    x, other = [1.0, -2.0, 0.0, 3.0], [[-1.0, 3.0, -1.0, -0.0]]
    grad_x, grad_other, grad_xx, grad_x_other = _copysign_grads(fg, x, other)
    np.testing.assert_array_equal(grad_x, [-1.0, -1.0, 0.0, -1.0])  # 0 at x = 0; -0.0 counts as negative
    np.testing.assert_array_equal(grad_other, np.zeros((1, 4)))
    np.testing.assert_array_equal(grad_xx, np.zeros(4))
    np.testing.assert_array_equal(grad_x_other, np.zeros((1, 4)))
    assert fg.copysign(fg.tensor([1.0], requires_grad=True), fg.tensor([-1.0])).grad_fn.name() == "CopysignBackward0"
    torch = pytest.importorskip("torch")
    x[2] = 0.5  # (torch's second derivative at x = 0 is NaN: its rule divides the result by x)
    for ours, theirs in zip(_copysign_grads(fg, x, other), _copysign_grads(torch, x, other)):
        np.testing.assert_array_equal(ours, theirs)


# ----- average pooling of integers: int64 pooled as torch pools Long (sums divided toward zero), others refused ------
_LONG = np.array([[[-7, 2, 5, 4, 3, -3, 1]]])
_POOLS = [("avg_pool1d", _LONG, {"kernel_size": 2}, [[[-2, 4, 0]]]),
          ("avg_pool1d", _LONG, {"kernel_size": 3, "stride": 2, "padding": 1}, [[[-1, 3, 1, 0]]]),
          ("avg_pool1d", _LONG, {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
           [[[-2, 3, 1, -1]]]),
          ("avg_pool2d", _LONG[None], {"kernel_size": (1, 2), "ceil_mode": True}, [[[[-2, 4, 0, 1]]]]),
          ("avg_pool2d", _LONG[None], {"kernel_size": (1, 2), "divisor_override": -3}, [[[[1, -3, 0]]]]),
          ("avg_pool3d", _LONG[None, None], {"kernel_size": (1, 1, 3)}, [[[[[0, 1]]]]])]


@pytest.mark.parametrize(("name", "x", "kwargs", "expected"), _POOLS)
def test_average_pooling_of_int64_divides_toward_zero(name: str, x: np.ndarray, kwargs: dict[str, Any],
                                                      expected: list[Any]) -> None:
    out = getattr(fg.nn.functional, name)(fg.tensor(x), **kwargs)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.data, expected)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs).numpy(), expected)


@pytest.mark.parametrize(("name", "x", "arg", "dtype", "torch_name"), [
    ("avg_pool1d", _LONG, 2, np.int32, "Int"), ("avg_pool2d", _LONG[None], (1, 2), np.uint8, "Byte"),
    ("avg_pool3d", _LONG[None, None], 1, np.bool_, "Bool"), ("avg_pool1d", _LONG, 2, np.complex128, "ComplexDouble"),
    ("adaptive_avg_pool1d", _LONG, 2, np.int64, "Long"), ("adaptive_avg_pool2d", _LONG[None], 2, np.int16, "Short"),
    ("adaptive_avg_pool3d", _LONG[None, None], 2, np.int64, "Long")])
def test_average_pooling_without_a_kernel_for_the_dtype_raises_torchs_error(name: str, x: np.ndarray, arg: Any,
                                                                           dtype: Any, torch_name: str) -> None:
    with pytest.raises(NotImplementedError, match=f"\"{name}\" not implemented for '{torch_name}'"):
        getattr(fg.nn.functional, name)(fg.tensor(x.astype(dtype)), arg)
    torch = pytest.importorskip("torch")  # (torch names its kernel, e.g. "avg_pool2d" for avg_pool1d)
    with pytest.raises(NotImplementedError, match=f"not implemented for '{torch_name}'"):
        getattr(torch.nn.functional, name)(torch.tensor(x.astype(dtype)), arg)


@pytest.mark.parametrize("pool", [lambda F, x: F.avg_pool3d(x, (2, 3, 2), (2, 2, 1), (1, 1, 0), True, False),
                                  lambda F, x: F.adaptive_avg_pool3d(x, (2, None, 3))], ids=["avg", "adaptive"])
def test_three_dimensional_average_pooling_matches_torch(pool: Any) -> None:
    x = np.random.default_rng(3).normal(size=(2, 3, 4, 5, 4))
    assert fg.check.gradcheck(lambda t: pool(fg.nn.functional, t), (fg.tensor(x, requires_grad=True),))
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(pool(fg.nn.functional, fg.tensor(x)).data, pool(torch.nn.functional,
                                                                               torch.tensor(x)).numpy(), atol=1e-12)


# ----- broadcasting errors: torch's RuntimeError and message, still a ValueError as NumPy's ------------------------
_MISMATCHED = [("add", lambda m, a, b: a + b, [(2, 3), (2, 4)]),
               ("mul_recorded", lambda m, a, b: a.requires_grad_() * b, [(2, 3), (2, 4)]),
               ("pow", lambda m, a, b: a ** b, [(5, 2, 3), (4, 1, 3)]),
               ("eq", lambda m, a, b: a == b, [(3,), (2, 4)]),
               ("atan2", lambda m, a, b: m.atan2(a, b), [(2, 3, 4), (5, 3, 6)]),
               ("where", lambda m, c, a, b: m.where(c > 0, a, b), [(2, 5), (2, 3), (2, 4)]),
               ("where_empty", lambda m, c, a, b: m.where(c > 0, a, b), [(0, 3), (1, 3), (2, 3)]),
               ("add_", lambda m, a, b: a.add_(b), [(2, 3), (2, 4)])]
_MESSAGES = {"add": (3, 4, 1), "mul_recorded": (3, 4, 1), "pow": (5, 4, 0), "eq": (3, 4, 1), "atan2": (4, 6, 2),
             "where": (5, 3, 1), "where_empty": (0, 2, 0), "add_": (3, 4, 1)}


@pytest.mark.parametrize(("name", "call", "shapes"), _MISMATCHED, ids=[case[0] for case in _MISMATCHED])
def test_operands_that_do_not_broadcast_raise_torchs_error(name: str, call: Any, shapes: list[tuple[int, ...]]) -> None:
    a, b, dim = _MESSAGES[name]
    message = rf"The size of tensor a \({a}\) must match the size of tensor b \({b}\) at non-singleton dimension {dim}"
    for error in (RuntimeError, ValueError):
        with pytest.raises(error, match=message):
            call(fg, *[fg.ones(shape) for shape in shapes])
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=message):
        call(torch, *[torch.ones(shape) for shape in shapes])


def test_ops_that_are_not_elementwise_keep_their_own_errors() -> None:
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        fg.ones(2, 3) @ fg.ones(2, 4)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        fg.cat([fg.ones(2, 3), fg.ones(2, 4)])


# ----- writes into an expanded tensor: allowed where the written elements do not overlap, as torch ------------------
_WRITES = {  # form -> (the write into v = x.expand(3, 4), x's values after it, from x = [[1, 2, 3, 4]])
    "setitem_row": (lambda v, m: v.__setitem__(0, m.tensor([9.0, 8.0, 7.0, 6.0])), [[9.0, 8.0, 7.0, 6.0]]),
    "setitem_element": (lambda v, m: v.__setitem__((0, 1), 5.0), [[1.0, 5.0, 3.0, 4.0]]),
    "setitem_one_row_slice": (lambda v, m: v.__setitem__(slice(0, 1), 7.0), [[7.0, 7.0, 7.0, 7.0]]),
    "add_on_row": (lambda v, m: v[0].add_(1.0), [[2.0, 3.0, 4.0, 5.0]]),
    "zero_on_row": (lambda v, m: v[1].zero_(), [[0.0, 0.0, 0.0, 0.0]]),
    "iadd_on_row": (lambda v, m: v.__setitem__(0, v[0].__iadd__(1.0)), [[2.0, 3.0, 4.0, 5.0]]),
}
_OVERLAPPING = {"add_": lambda v, m: v.add_(1.0), "setitem_column": lambda v, m: v.__setitem__((slice(None), 0), 7.0)}


@pytest.mark.parametrize("form", list(_WRITES))
def test_writing_a_part_of_an_expanded_tensor_whose_elements_do_not_overlap_reaches_its_base(form: str) -> None:
    write, expected = _WRITES[form]
    x = fg.tensor([[1.0, 2.0, 3.0, 4.0]])
    v = x.expand(3, 4)
    write(v, fg)
    np.testing.assert_array_equal(x.data, expected)
    np.testing.assert_array_equal(v.data, np.broadcast_to(expected, (3, 4)))
    torch = pytest.importorskip("torch")
    t = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    write(t.expand(3, 4), torch)
    np.testing.assert_array_equal(t.numpy(), expected)


@pytest.mark.parametrize("form", list(_OVERLAPPING))
def test_writing_overlapping_elements_of_an_expanded_tensor_raises_torchs_error(form: str) -> None:
    message = "more than one element of the written-to tensor refers to a single memory location"
    with pytest.raises(RuntimeError, match=message):
        _OVERLAPPING[form](fg.tensor([[1.0, 2.0, 3.0, 4.0]]).expand(3, 4), fg)
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=message):
        _OVERLAPPING[form](torch.tensor([[1.0, 2.0, 3.0, 4.0]]).expand(3, 4), torch)


def _written_expanded(m: Any, a: Any, w: Any, form: str) -> Any:
    """A function of ``a`` and ``w`` that writes ``w`` into a part of an expansion of ``a``'s copy (``m`` is funcgrad
    or torch)."""
    x = a * 1.0
    v = x.expand(3, 4)
    if form == "setitem":
        v[0] = w
    elif form == "add_":
        v[0].add_(w)
    else:
        v[1].mul_(w)
    return (v * m.arange(12.0).reshape(3, 4)).sum() + (x ** 2).sum()


@pytest.mark.parametrize("form", ["setitem", "add_", "mul_"])
def test_gradients_flow_through_a_write_into_an_expanded_tensor(form: str) -> None:
    rng = np.random.default_rng(5)
    a, w = rng.normal(size=(1, 4)), rng.normal(size=4)
    inputs = (fg.tensor(a, requires_grad=True), fg.tensor(w, requires_grad=True))
    assert fg.check.gradcheck(lambda *t: _written_expanded(fg, *t, form), inputs)
    assert fg.check.gradgradcheck(lambda *t: _written_expanded(fg, *t, form), inputs)
    torch = pytest.importorskip("torch")
    theirs = (torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True))
    expected = torch.autograd.grad(_written_expanded(torch, *theirs, form), theirs)
    for ours, their in zip(grad(_written_expanded(fg, *inputs, form), inputs), expected):
        np.testing.assert_allclose(ours.data, their.numpy(), rtol=1e-12)
