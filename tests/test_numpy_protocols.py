"""NumPy code differentiates as written: NumPy's protocols on Tensor, ndarray methods, no silent cut of the
graph, ``funcgrad.numpy``, and NumPy code through ``funcgrad.func``, ``funcgrad.functional``, gradcheck
and the SciPy bridge. (Every entry point's value and derivatives: tests/ops/test_numpy_table.py.)"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from typing import Any

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.signal import convolve2d, correlate2d

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import func
from funcgrad.autograd import Function
from funcgrad.autograd import forward_ad as fwAD
from funcgrad.check import gradcheck, gradgradcheck
from funcgrad.optimize import scipy_objective
from tests.budget import examples


def rosen(x: Any) -> Any:
    """Rosenbrock as NumPy code: nothing funcgrad-specific."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0)


def leaf(*values: float) -> fg.Tensor:
    return fg.tensor(np.array(values, dtype=float), requires_grad=True)


# ----- the motivating silent failures --------------------------------------------------------------------
def test_a_ufunc_on_a_tensor_keeps_the_graph() -> None:
    x = leaf(0.5, 1.0, 2.0)
    (np.sin(x) * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.data) * x.data + np.sin(x.data), rtol=1e-14)


def test_np_sum_takes_numpys_axis() -> None:
    x = leaf(1.0, 2.0, 3.0)
    out = np.sum(x * x, axis=0)
    assert isinstance(out, fg.Tensor) and out.requires_grad
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_jit_of_the_grad_of_numpy_code_is_not_zero() -> None:
    rng = np.random.default_rng(0)
    x, W = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))

    def loss(W: Any) -> Any:
        return np.mean(np.tanh(x @ W) ** 2)

    jitted = func.jit(func.grad(loss))
    for scale in (1.0, 0.5, 2.0):  # the recording, then replays
        expected = 2 * x.T @ (np.tanh(x @ (scale * W)) * (1 - np.tanh(x @ (scale * W)) ** 2)) / 8
        np.testing.assert_allclose(jitted(scale * W), expected, rtol=1e-12)


# ----- mixed operands --------------------------------------------------------------------------------------
@pytest.mark.parametrize("expr", [
    lambda a, t: a + t, lambda a, t: t - a, lambda a, t: np.float64(2.0) * t, lambda a, t: a @ t,
    lambda a, t: t ** a, lambda a, t: a / t, lambda a, t: np.stack([t, a]), lambda a, t: np.concatenate([a, t]),
    lambda a, t: np.maximum(a, t), lambda a, t: np.dot(a, t), lambda a, t: np.where(a > 1, t, a),
], ids=["add", "rsub", "float64", "rmatmul", "pow", "rdiv", "stack", "concatenate", "maximum", "dot", "where"])
def test_mixed_operands_keep_the_graph(expr: Any) -> None:
    a, t = np.array([1.5, 0.5]), leaf(0.7, 1.3)
    out = expr(a, t)
    assert isinstance(out, fg.Tensor) and out.requires_grad
    assert gradcheck(lambda t: expr(a, t), (t,)) and gradgradcheck(lambda t: expr(a, t), (t,))


# ----- ufunc forms -------------------------------------------------------------------------------------------
def test_out_a_tensor_is_the_in_place_op() -> None:
    x = leaf(0.5, 1.0)
    y = x * 1.0
    version = y._version
    assert np.multiply(y, y, out=y) is y
    assert y._version == version + 1 and y.grad_fn.name() == "MulBackward0"
    np.exp(y, out=(y,))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.data ** 2) * 2 * x.data, rtol=1e-14)
    with pytest.raises(TypeError, match="out= must be a Tensor"):
        np.add(x, 1.0, out=np.zeros(2))


def test_a_ufunc_without_a_rule_names_itself_and_the_way_out() -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(TypeError, match=r"ufunc 'spacing' has no derivative rule.*t\.detach\(\)"):
        np.spacing(x)
    with pytest.raises(TypeError, match=r"np\.subtract\.reduce has no derivative rule"):
        np.subtract.reduce(x)
    with pytest.raises(TypeError, match=r"numpy\.linalg\.eig has no derivative rule"):
        np.linalg.eig(x * np.eye(2))
    with pytest.raises(TypeError, match="where"):
        np.add(x, 1.0, where=np.array([True, False]))
    assert x.grad is None and x._version == 0  # nothing happened


def test_ufunc_dtype_converts_the_result() -> None:
    x = leaf(1.0, 2.0)
    out = np.multiply(x, 2.0, dtype=np.float32)
    assert out.dtype == np.float32 and out.requires_grad


def test_forward_mode_through_ufuncs_comes_from_the_same_table() -> None:
    x, t = np.array([0.3, 0.9]), np.array([1.0, -2.0])
    with fwAD.dual_level():
        out = np.arctan2(np.sin(fwAD.make_dual(fg.tensor(x), fg.tensor(t))), 1.5)
        tangent = fwAD.unpack_dual(out).tangent.numpy()
    np.testing.assert_allclose(tangent, 1.5 * np.cos(x) * t / (np.sin(x) ** 2 + 2.25), rtol=1e-14)


# ----- ndarray methods and NumPy keywords --------------------------------------------------------------------
def test_methods_take_numpys_keywords() -> None:
    data = np.array([[1.0, 5.0, 2.0], [4.0, 0.5, 3.0]])
    x = fg.tensor(data, requires_grad=True)
    with fg.no_grad():
        for method, kwargs in [("sum", {"axis": 0}), ("mean", {"axis": 1, "keepdims": True}), ("prod", {"axis": 1}),
                               ("var", {"axis": 0, "ddof": 0}), ("std", {"axis": 1, "ddof": 1}),
                               ("max", {"axis": 1}), ("min", {"axis": 0, "keepdims": True}),
                               ("max", {"keepdims": True}),
                               ("argmax", {"axis": 1}), ("cumsum", {"axis": 1}), ("any", {"axis": 0}), ("all", {})]:
            np.testing.assert_array_equal(np.asarray(getattr(x, method)(**kwargs)), getattr(data, method)(**kwargs))
    values, indices = x.max(dim=1)  # torch's spelling: values and indices
    np.testing.assert_array_equal(indices.numpy(), [1, 0])
    assert gradcheck(lambda x: x.max(axis=1) + x.min(axis=0, keepdims=True).sum(), (x,))


def test_ndarray_methods_and_attributes() -> None:
    data = np.arange(6.0).reshape(2, 3) + 1
    x = fg.tensor(data, requires_grad=True)
    assert x.size == 6 and x.size() == (2, 3) and x.size(1) == 3 and x.numel() == 6 and x.ndim == 2
    checks = {"T": x.T, "ravel": x.ravel(), "flatten": x.flatten(), "copy": x.copy(), "astype": x.astype(np.float32),
              "dot": x.dot(np.ones(3)), "transpose": x.transpose(), "transpose(axes)": x.transpose((1, 0)),
              "swapaxes": x.swapaxes(0, 1), "clip": x.clip(2.0, 5.0), "repeat(axis)": x.repeat(2, axis=1)}
    expected = {"T": data.T, "ravel": data.ravel(), "flatten": data.flatten(), "copy": data.copy(),
                "astype": data.astype(np.float32), "dot": data.dot(np.ones(3)), "transpose": data.transpose(),
                "transpose(axes)": data.transpose((1, 0)), "swapaxes": data.swapaxes(0, 1),
                "clip": data.clip(2.0, 5.0), "repeat(axis)": data.repeat(2, axis=1)}
    for name, out in checks.items():
        assert out.requires_grad, name
        assert out.dtype == expected[name].dtype, name
        np.testing.assert_array_equal(out.detach().numpy(), expected[name], err_msg=name)
    assert x.copy().data is not x.data
    np.testing.assert_array_equal(x.repeat(2, 1).detach().numpy(), np.tile(data, (2, 1)))  # torch's repeat stays
    assert x.transpose(0, 1).shape == (3, 2) and fg.zeros(2, 3, 4).transpose(0, 2).shape == (4, 3, 2)  # torch's swap


def test_fill_is_in_place_as_numpys() -> None:
    z = fg.zeros(3)
    assert z.fill(2.0) is None
    np.testing.assert_array_equal(z.numpy(), [2.0, 2.0, 2.0])


# ----- no silent cut ------------------------------------------------------------------------------------------
def test_conversions_of_a_tensor_that_requires_grad_raise_torchs_error() -> None:
    x = leaf(1.0, 2.0)
    for convert in (np.asarray, np.array, np.asanyarray, lambda t: t.numpy()):
        with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad\. "
                                               r"Use tensor\.detach\(\)\.numpy\(\) instead"):
            convert(x)
    with fg.no_grad():
        np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(x.detach()), [1.0, 2.0])


def test_float_of_a_tensor_that_requires_grad_warns_as_torch() -> None:
    x = fg.tensor(2.0, requires_grad=True)
    with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True to a scalar"):
        assert float(x) == 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with fg.no_grad():
            assert float(x) == 2.0
        assert float(x.detach()) == 2.0 and x.item() == 2.0
    a = np.zeros(2)
    with pytest.warns(UserWarning, match=r"writing a Tensor into a NumPy array, a\[i\] = t, converts it so"):
        a[0] = x * x  # (NumPy converts the Tensor with float(): the derivative is cut, and the warning says how)


class ScipyConv2dFunction(Function):
    """PyTorch's NumPy-extension tutorial Function, verbatim but for the names: NumPy/SciPy in forward."""

    @staticmethod
    def forward(ctx: Any, input: Any, filter: Any, bias: Any) -> Any:  # noqa: A002
        result = correlate2d(input.numpy(), filter.numpy(), mode="valid")
        result += bias.numpy()
        ctx.save_for_backward(input, filter, bias)
        return fg.as_tensor(result, dtype=input.dtype)

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        grad_output = grad_output.detach()
        input, filter, bias = ctx.saved_tensors  # noqa: A001
        grad_output = grad_output.numpy()
        grad_bias = np.sum(grad_output, keepdims=True)
        grad_input = convolve2d(grad_output, filter.numpy(), mode="full")
        grad_filter = correlate2d(input.numpy(), grad_output, mode="valid")
        return fg.from_numpy(grad_input), fg.from_numpy(grad_filter), fg.from_numpy(grad_bias)


def test_a_function_may_call_numpy_in_forward() -> None:
    rng = np.random.default_rng(0)
    image = fg.tensor(rng.normal(size=(6, 6)), requires_grad=True)
    kernel = fg.tensor(rng.normal(size=(3, 3)), requires_grad=True)
    bias = fg.tensor(rng.normal(size=(1, 1)), requires_grad=True)
    out = ScipyConv2dFunction.apply(image, kernel, bias)
    assert out.shape == (4, 4) and out.requires_grad
    assert gradcheck(ScipyConv2dFunction.apply, (image, kernel, bias))


# ----- funcgrad.numpy --------------------------------------------------------------------------------------------
def test_funcgrad_numpy_builds_arrays_from_traced_values() -> None:
    def f(x: Any) -> Any:
        y = fnp.array([x[0] * x[1], [x[1] ** 2, 1.0][0]])
        z = fnp.zeros_like(x)
        z[1:] = fnp.sin(x[:-1])
        return fnp.sum(y) + fnp.sum(z * x)

    x = np.array([0.5, 1.5, -0.3])
    expected = [x[1] + np.cos(x[0]) * x[1], x[0] + 2 * x[1] + np.sin(x[0]) + np.cos(x[1]) * x[2], np.sin(x[1])]
    np.testing.assert_allclose(func.grad(f)(x), expected, rtol=1e-14)
    assert type(fnp.array([1.0, 2.0])) is np.ndarray and fnp.asarray(fg.tensor(1.0)).dtype == np.float64
    assert fnp.linalg.solve is np.linalg.solve and fnp.pi == np.pi
    assert fg.tensor(1.0).__array_namespace__() is fnp


# ----- NumPy code through the transforms ---------------------------------------------------------------------------
def numpy_model(x: Any) -> Any:
    """A vector function as NumPy code: ufuncs, functions, methods, indexing."""
    h = np.tanh(np.outer(x, x[::-1]) @ x)
    return np.concatenate([np.cumsum(h) * x.max(), np.atleast_1d(np.linalg.norm(h) + np.mean(np.exp(-x ** 2)))])


def test_numpy_code_through_every_transform() -> None:
    x, v = np.array([0.3, -0.8, 1.1]), np.array([1.0, 0.5, -2.0])
    J = func.jacrev(numpy_model)(x)
    np.testing.assert_allclose(func.jacfwd(numpy_model)(x), J, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(func.jvp(numpy_model, (x,), (v,))[1], J @ v, rtol=1e-10, atol=1e-12)
    out, pullback = func.vjp(numpy_model, x)
    u = np.arange(1.0, 5.0)
    np.testing.assert_allclose(pullback(u)[0], u @ J, rtol=1e-10)
    _, lin = func.linearize(numpy_model, x)
    np.testing.assert_allclose(lin(v), J @ v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(func.jit(func.jacrev(numpy_model))(x), J, rtol=1e-12)
    np.testing.assert_allclose(fg.functional.jacobian(numpy_model, fg.tensor(x)).numpy(), J, rtol=1e-10)
    np.testing.assert_allclose(fg.functional.jacobian(numpy_model, fg.tensor(x), vectorize=True).numpy(), J,
                               rtol=1e-10, atol=1e-12)
    H = func.hessian(rosen)(x)
    np.testing.assert_allclose(H, scipy.optimize.rosen_hess(x), rtol=1e-12)
    np.testing.assert_allclose(fg.functional.hvp(rosen, fg.tensor(x), fg.tensor(v))[1].numpy(), H @ v, rtol=1e-12)
    t = fg.tensor(x, requires_grad=True)
    assert gradcheck(numpy_model, (t,)) and gradgradcheck(numpy_model, (t,))


def test_scipy_objective_minimizes_numpy_code() -> None:
    objective = scipy_objective(rosen, np.array([1.3, 0.7, 0.8, 1.9, 1.2]))
    result = scipy.optimize.minimize(objective.fun, objective.x0, jac=True, hessp=objective.hessp,
                                     method="trust-ncg", options={"gtol": 1e-10})
    np.testing.assert_allclose(result.x, np.ones(5), atol=1e-7)


_SCIPY_ROSEN = textwrap.dedent("""
    import numpy as np, scipy.optimize as so
    from funcgrad import func
    from funcgrad.optimize import scipy_objective
    for n in (2, 3, 7, 20):
        x, p = np.cos(np.arange(n) * 1.3) * 1.2, np.sin(np.arange(n) + 0.5)
        np.testing.assert_allclose(func.grad(so.rosen)(x), so.rosen_der(x), rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(func.hessian(so.rosen)(x), so.rosen_hess(x), rtol=1e-13, atol=1e-12)
        hvp = func.jvp(func.grad(so.rosen), (x,), (p,))[1]  # forward over reverse
        np.testing.assert_allclose(hvp, so.rosen_hess_prod(x, p), rtol=1e-13, atol=1e-11)
    objective = scipy_objective(so.rosen, np.array([1.3, 0.7, 0.8, 1.9, 1.2]))
    result = so.minimize(objective.fun, objective.x0, jac=True, hessp=objective.hessp, method="trust-ncg",
                         options={"gtol": 1e-10})
    np.testing.assert_allclose(result.x, np.ones(5), atol=1e-7)
""")


def test_scipys_own_rosenbrock_with_its_exact_derivatives() -> None:
    """SciPy's array-API functions take Tensors when SciPy's array API support is on (it is read at import,
    hence the fresh interpreter): grad, Hessian and forward-over-reverse hvp equal rosen_der, rosen_hess and
    rosen_hess_prod at several sizes, and scipy_objective minimizes SciPy's own Rosenbrock."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, SCIPY_ARRAY_API="1", PYTHONPATH=root)
    run = subprocess.run([sys.executable, "-c", _SCIPY_ROSEN], env=env, capture_output=True, text=True, cwd=root)
    assert run.returncode == 0, run.stderr


# ----- hypothesis: programs written with np.* equal the same programs in funcgrad's namespace ------------------
_STEPS = {  # name -> (NumPy code, funcgrad's namespace), each squashed by tanh so nothing overflows
    "sin": (lambda a: np.sin(a), lambda a: fg.sin(a)),
    "exp": (lambda a: np.tanh(np.exp(a)), lambda a: fg.tanh(fg.exp(a))),
    "square": (lambda a: np.square(a) * 0.5, lambda a: fg.square(a) * 0.5),
    "hypot": (lambda a: np.tanh(np.hypot(a, 0.5)), lambda a: fg.tanh(fg.hypot(a, 0.5))),
    "cumsum": (lambda a: np.tanh(np.cumsum(a)), lambda a: fg.tanh(fg.cumsum(a, 0))),
    "flip": (lambda a: np.flip(a) * a, lambda a: fg.flip(a, (0,)) * a),
    "max": (lambda a: a - a.max(), lambda a: a - fg.amax(a)),
    "mean": (lambda a: a * np.mean(a, axis=0, keepdims=True), lambda a: a * fg.mean(a, 0, True)),
    "outer": (lambda a: np.tanh(np.outer(a, a).sum(axis=1)), lambda a: fg.tanh(fg.sum(fg.outer(a, a), 1))),
    "sort": (lambda a: np.sort(a) * a, lambda a: fg.take_along_dim(a, np.argsort(a.detach().numpy()), 0) * a),
    "logaddexp": (lambda a: np.tanh(np.logaddexp(a, -a)), lambda a: fg.tanh(fg.logaddexp(a, -a))),
    "where": (lambda a: np.where(a > 0, a, 0.1 * a), lambda a: fg.where(a > 0, a, 0.1 * a)),
}


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(sorted(_STEPS)), min_size=1, max_size=5),
       st.lists(st.floats(-2, 2), min_size=2, max_size=5))
def test_numpy_programs_equal_the_funcgrad_namespace(steps: list[str], values: list[float]) -> None:
    def program(which: int) -> Any:
        def f(x: Any) -> Any:
            for name in steps:
                x = _STEPS[name][which](x)
            return x.sum()
        return f

    x = np.array(values)
    np.testing.assert_allclose(func.grad(program(0))(x), func.grad(program(1))(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(func.hessian(program(0))(x), func.hessian(program(1))(x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("take", [lambda a, i: np.take(a, i), lambda a, i: np.take(a, i, axis=0),
                                  lambda a, i: np.take_along_axis(a, i, axis=0)])
def test_indices_changed_in_place_before_the_backward_raise(take: Any) -> None:
    """As torch's take/take_along_dim: the rule reads the indices, so a change in place is caught, not a
    gradient at the new places (np.take(a, i) with i = [0, 1] changed to [1, 2] gave [0, 1, 1])."""
    a = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    i = fg.tensor([0, 1])
    out = take(a, i)
    with fg.no_grad():
        i.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_astype_keeps_numpys_copy_and_casting() -> None:
    """``astype(copy=False)`` to the tensor's own dtype is the tensor itself (a write to it is a write to the
    tensor, as NumPy's); ``casting`` is checked as NumPy does instead of being ignored."""
    t = fg.tensor([1.0, 2.0], requires_grad=True)
    assert t.astype(np.float64, copy=False) is t and np.astype(t, np.float64, copy=False) is t
    assert t.astype(np.float64) is not t
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        t.astype(np.int64, casting="safe")
    assert t.astype(np.float32, casting="same_kind").dtype == np.float32


@pytest.mark.parametrize("a_shape,b_shape", [((3, 3, 3), (3, 3)), ((3, 3), (3,)), ((2, 3, 3), (3,)),
                                             ((2, 3, 3), (3, 2)), ((3, 3), (3, 3))])
def test_np_linalg_solve_reads_b_as_numpy_does(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    """``b`` is a vector only when 1-D: for ``a`` (3, 3, 3) and ``b`` (3, 3) NumPy gives (3, 3, 3); torch's rule
    (a batch of vectors) gave (3, 3), silently different."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=a_shape) + 3 * np.eye(3), rng.normal(size=b_shape)
    got = np.linalg.solve(fg.tensor(a, requires_grad=True), fg.tensor(b))
    np.testing.assert_allclose(got.data, np.linalg.solve(a, b))
