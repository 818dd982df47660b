"""Differences from PyTorch found in code written for torch, each fixed and kept fixed: the expected value or error
is asserted as it is (without torch), and compared with torch itself where torch is installed."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import funcgrad as fg


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
