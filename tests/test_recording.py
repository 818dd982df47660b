"""What an op call records: the in-place recording of ops on ``(x)`` and ``(x, y)`` (real floats) and the general
recorder it defers to (complex values, integer inputs, other saving) keep the same graph and the same checks."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg

CHANGED = r"modified by an inplace operation"


def leaf(*values: float, dtype: type = np.float64) -> fg.Tensor:
    return fg.tensor(np.array(values, dtype=dtype), requires_grad=True)


@pytest.mark.parametrize("make, name", [
    (lambda x, c: fg.sin(x), "SinBackward0"),        # saves its input
    (lambda x, c: fg.exp(x), "ExpBackward0"),        # saves its output
    (lambda x, c: x * c, "MulBackward0"),            # saves the other input (a Tensor without grad)
    (lambda x, c: c * x, "MulBackward0"),
])
def test_a_saved_value_changed_in_place_is_caught(make: object, name: str) -> None:
    x = leaf(0.5, 1.5) * 1  # a non-leaf, so it may be changed in place
    c = fg.tensor([2.0, 3.0])
    y = make(x, c)  # type: ignore[operator]
    assert y.grad_fn.name() == name
    (y if name == "ExpBackward0" else (x if name == "SinBackward0" else c)).add_(1.0)
    with pytest.raises(RuntimeError, match=CHANGED):
        y.sum().backward()


def test_values_not_saved_may_change() -> None:
    a, b = leaf(1.0, 2.0), leaf(3.0, 4.0)
    x, z = a * 1, b * 1
    y = x + z  # saves nothing
    x.add_(5.0)
    z.mul_(2.0)
    y.sum().backward()
    np.testing.assert_allclose(a.grad.data, [1.0, 1.0])
    np.testing.assert_allclose(b.grad.data, [1.0, 1.0])  # y was recorded before z changed


def test_a_quotient_may_be_written_in_place_before_its_backward() -> None:
    """div's rules read its inputs, not its output (torch's), so ``y = a / b; y.mul_(2)`` still differentiates (an
    output saved for the rule would raise a version error here, where torch succeeds)."""
    a, b = leaf(1.0, 2.0, 3.0), leaf(2.0, 4.0, 5.0)
    y = a / b
    y.mul_(2.0)
    y.sum().backward()
    np.testing.assert_allclose(a.grad.data, 2 / b.data)
    np.testing.assert_allclose(b.grad.data, -2 * a.data / b.data ** 2)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_every_real_float_dtype_records_the_same_gradients(dtype: type) -> None:
    x, w = leaf(0.25, 0.75, dtype=dtype), leaf(1.5, -0.5, dtype=dtype)
    y = (fg.exp(fg.sin(x) * w) + x * 2.0).sum()
    gx, gw = fg.autograd.grad(y, (x, w))
    xs, ws = x.data.astype(np.float64), w.data.astype(np.float64)
    e = np.exp(np.sin(xs) * ws)
    assert gx.dtype == gw.dtype == np.dtype(dtype)
    tol = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(gx.data, e * ws * np.cos(xs) + 2.0, rtol=tol)
    np.testing.assert_allclose(gw.data, e * np.sin(xs), rtol=tol)


def test_complex_values_go_the_general_way() -> None:
    z = fg.tensor(np.array([1 + 2j, -0.5 + 0.25j]), requires_grad=True)
    y = (fg.sin(z) * z).abs().sum()
    (g,) = fg.autograd.grad(y, z)
    zs = z.data
    f = np.sin(zs) * zs  # d|f|/d(conj z) for a real loss: (f / |f|) * conj(f'(z))
    expected = f / np.abs(f) * np.conj(np.cos(zs) * zs + np.sin(zs))
    np.testing.assert_allclose(g.data, expected, rtol=1e-12)


def test_a_real_only_op_refuses_complex_inputs() -> None:
    z = fg.tensor(np.array([1 + 2j]), requires_grad=True)
    with pytest.raises(RuntimeError, match="maximum: the derivative for complex values is not implemented"):
        fg.maximum(z, z)


def test_bool_and_integer_results_carry_no_gradient() -> None:
    x = leaf(1.5, -2.5)
    flags = fg.gt(x, 0.0)  # an op on (x, y)
    assert flags.dtype == np.bool_ and not flags.requires_grad and flags.grad_fn is None
    index = fg.argmax(x)
    assert index.dtype.kind == "i" and not index.requires_grad


def test_a_mul_by_a_number_saves_no_tensor_and_runs_twice_with_retain_graph() -> None:
    x = leaf(1.0, 2.0)
    y = (x * 3.0).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.data, [6.0, 6.0])


def test_ops_on_one_tensor_and_options_take_positions_keywords_and_defaults() -> None:
    """sum, reshape, linalg ops... (one tensor input, then options) record on their own path: every way Python
    allows to pass the arguments gives the same node, and bad calls fail as Python's would."""
    x = fg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    calls = [fg.sum(x, 0), fg.sum(x, 0, False), fg.sum(x, dim=0), fg.sum(x=x, dim=0), x.sum(0), x.sum(axis=0)]
    for y in calls:
        np.testing.assert_array_equal(y.data, [3.0, 5.0, 7.0])
        assert y.grad_fn.name() == "SumBackward0"
    assert fg.sum(x, 1, True).shape == (2, 1) and fg.sum(x).shape == ()
    y = fg.sum(x)  # a full reduction: NumPy gives a scalar, the result is a 0-d Tensor with a history
    assert isinstance(y.data, np.ndarray) and y.requires_grad
    y.backward()
    np.testing.assert_array_equal(x.grad.data, np.ones((2, 3)))
    assert np.sum(np.ones(3)) == fg.sum(np.ones(3)) == 3.0  # no Tensor: the kernel's value
    with pytest.raises(TypeError, match="sum.* takes 3 arguments but 4 were given"):
        fg.sum(x, 0, True, 5)
    with pytest.raises(TypeError, match="sum.*missing 1 required positional argument: 'x'"):
        fg.sum()
    with pytest.raises(TypeError, match="sum.*multiple values for argument 'dim'"):
        fg.sum(x, 0, dim=1)
    with pytest.raises(TypeError, match="sum.*unexpected keyword argument 'dims'"):
        fg.sum(x, dims=0)


def test_ops_on_two_tensors_take_their_own_keywords_on_the_fast_path() -> None:
    """Ops whose two tensor parameters are not named (x, y) share mul's recording path; they still take their
    parameters by name, and refuse unknown ones and extra arguments as Python would."""
    g = fg.tensor([1.0, 2.0], requires_grad=True)
    y = fg.tensor([0.5, 0.25], requires_grad=True)
    by_position = fg.tanh_backward(g, y)
    by_name = fg.tanh_backward(grad_output=g, output=y)
    np.testing.assert_array_equal(by_name.data, by_position.data)
    np.testing.assert_array_equal(by_name.data, g.data * (1 - y.data ** 2))
    assert by_name.grad_fn.name() == "TanhBackwardBackward0"
    z = fg.polar(abs=fg.tensor([2.0]), angle=fg.tensor([0.5]))
    np.testing.assert_allclose(z.data, 2 * np.exp(0.5j))
    with pytest.raises(TypeError, match="tanh_backward.*unexpected keyword argument 'grad'"):
        fg.tanh_backward(g, grad=y)
    with pytest.raises(TypeError, match="tanh_backward"):
        fg.tanh_backward(g, y, y)
