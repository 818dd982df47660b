"""NumPy's own meaning, on Tensors: options NumPy reads differently from torch (the triangle ``UPLO``/``upper``
picks, ``squeeze``'s axis check, ``take``'s ``mode``, einsum's sublist form, result dtypes) give NumPy's value,
and the derivatives are those of that function (gradcheck / gradgradcheck), or a clear error. Each test names
the silently different result it once gave."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import func
from funcgrad.check import gradcheck, gradgradcheck
from tests.budget import examples

_rng = np.random.default_rng(7)
_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
_HERMITIAN = _SPD + 1j * np.array([[0.0, 0.3, -0.2], [-0.3, 0.0, 0.4], [0.2, -0.4, 0.0]])


def _junk_below(a: np.ndarray) -> np.ndarray:
    """``a`` with its strict lower triangle overwritten: what a routine reading the upper triangle ignores."""
    return np.triu(a) + np.tril(_rng.normal(size=a.shape), -1)


def _junk_above(a: np.ndarray) -> np.ndarray:
    return np.tril(a) + np.triu(_rng.normal(size=a.shape), 1)


# ----- the triangle NumPy reads ---------------------------------------------------------------------------
@pytest.mark.parametrize("a", [_junk_below(_SPD), _HERMITIAN, _junk_below(_HERMITIAN)], ids=["real", "hermitian",
                                                                                              "complex"])
def test_cholesky_upper_reads_the_upper_triangle(a: np.ndarray) -> None:
    """``np.linalg.cholesky(a, upper=True)`` is U with U^H U = a read from the upper triangle: it was the transpose
    of the lower factor of the lower triangle (another matrix for a real ``a`` whose lower triangle is not a's
    mirror, and U^T instead of U^H, so U^T U != a, for every complex Hermitian ``a``)."""
    got = np.linalg.cholesky(fg.tensor(a), upper=True)
    np.testing.assert_allclose(got.numpy(), np.linalg.cholesky(a, upper=True), rtol=1e-12, atol=1e-12)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(1, 4), st.booleans(), st.booleans(), st.integers(0, 2**32 - 1))
def test_the_triangle_options_equal_numpys(n: int, upper: bool, complex_: bool, seed: int) -> None:
    """cholesky(upper=), eigh/eigvalsh(UPLO=) of a Hermitian positive-definite matrix whose other triangle is
    noise: NumPy's factor and eigenvalues, eigenvectors equal up to phases."""
    rng = np.random.default_rng(seed)
    b = rng.normal(size=(n, n)) + (1j * rng.normal(size=(n, n)) if complex_ else 0)
    h = b @ b.conj().T + n * np.eye(n)
    a = np.triu(h) + np.tril(rng.normal(size=(n, n)), -1) if upper else np.tril(h) + np.triu(rng.normal(size=(n, n)), 1)
    t = fg.tensor(a)
    np.testing.assert_allclose(np.linalg.cholesky(t, upper=upper).numpy(), np.linalg.cholesky(a, upper=upper),
                               rtol=1e-10, atol=1e-10)
    uplo = "U" if upper else "L"
    w, v = np.linalg.eigh(t, UPLO=uplo)
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(a, UPLO=uplo), rtol=1e-10)
    np.testing.assert_allclose(v.numpy().conj().T @ h @ v.numpy(), np.diag(w.numpy()), atol=1e-8 * n * np.abs(h).max())


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_derivatives_live_on_the_triangle_it_reads(upper: bool) -> None:
    a = fg.tensor(_junk_below(_SPD) if upper else _junk_above(_SPD), requires_grad=True)
    np.linalg.cholesky(a, upper=upper).sum().backward()
    read = np.triu(np.ones((3, 3), bool)) if upper else np.tril(np.ones((3, 3), bool))
    assert np.all(a.grad.numpy()[~read] == 0) and np.all(a.grad.numpy()[read] != 0)
    assert gradcheck(lambda x: np.linalg.cholesky(x, upper=upper), (a,))
    assert gradgradcheck(lambda x: np.linalg.cholesky(x, upper=upper), (a,))


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_of_a_complex_hermitian_matrix_is_numpys(uplo: str) -> None:
    """``UPLO='U'`` read the transpose's lower triangle, which for a complex matrix is the conjugate: the
    eigenvectors came out conjugated (V^H a V not diagonal)."""
    a = _junk_below(_HERMITIAN) if uplo == "U" else _junk_above(_HERMITIAN)
    w, v = np.linalg.eigh(fg.tensor(a), UPLO=uplo)
    w_ref, v_ref = np.linalg.eigh(a, UPLO=uplo)
    np.testing.assert_allclose(w.numpy(), w_ref, rtol=1e-12)
    np.testing.assert_allclose(np.abs(v_ref.conj().T @ v.numpy()), np.eye(3), atol=1e-10)  # same up to phases
    np.testing.assert_allclose(np.linalg.eigvalsh(fg.tensor(a), UPLO=uplo).numpy(), w_ref, rtol=1e-12)


# ----- shapes and indices -----------------------------------------------------------------------------------
def test_squeeze_of_an_axis_longer_than_one_raises_numpys_error() -> None:
    """``np.squeeze(t, axis=0)`` of a (3, 4) Tensor returned it unchanged (torch's squeeze), where NumPy raises."""
    t = fg.tensor(np.ones((3, 1, 4)), requires_grad=True)
    for axis in (0, (1, 2), -1):
        with pytest.raises(ValueError, match="cannot select an axis to squeeze out which has size not equal to one"):
            np.squeeze(t, axis=axis)
    assert np.squeeze(t, axis=(1,)).shape == (3, 4) and np.squeeze(t, axis=-2).shape == (3, 4)


def test_einsum_in_its_sublist_form() -> None:
    """``np.einsum(a, [0, 1], b, [1], [0])`` (operands and axis lists) ended in a RecursionError."""
    a, b = _rng.normal(size=(3, 4)), _rng.normal(size=4)
    c = _rng.normal(size=(2, 3, 4))
    calls = [lambda x, y: np.einsum(x, [0, 1], y, [1], [0]), lambda x, y: np.einsum(x, [0, 1], y, [1]),
             lambda x, y: np.einsum(x, [Ellipsis, 1], y, [1], [Ellipsis])]
    for call in calls:
        x, y = fg.tensor(a, requires_grad=True), fg.tensor(b, requires_grad=True)
        np.testing.assert_allclose(call(x, y).detach().numpy(), call(a, b), rtol=1e-12)
        assert gradcheck(call, (x, y)) and gradgradcheck(call, (x, y))
    np.testing.assert_allclose(np.einsum(fg.tensor(c), [0, 1, 2], [2, 0]).numpy(), np.einsum(c, [0, 1, 2], [2, 0]))


@pytest.mark.parametrize("mode", ["wrap", "clip"])
@pytest.mark.parametrize("axis", [None, 1, -1])
def test_take_reads_indices_out_of_range_as_its_mode_says(mode: str, axis: int | None) -> None:
    """``np.take(t, [0, 15], mode='wrap')`` raised an IndexError: the mode was ignored."""
    a, idx = _rng.normal(size=(3, 4)), np.array([[0, 15], [-7, 2]])
    t = fg.tensor(a, requires_grad=True)
    np.testing.assert_allclose(np.take(t, idx, axis=axis, mode=mode).detach().numpy(),
                               np.take(a, idx, axis=axis, mode=mode))
    assert gradcheck(lambda x: np.take(x, idx, axis=axis, mode=mode), (t,))


def test_where_with_a_float_condition_reads_its_truth_as_numpy() -> None:
    """A float condition that requires grad raised "the derivative of 'where' with respect to 'condition' is not
    implemented" in the backward: NumPy reads it as ``condition != 0``, which has no derivative."""
    c = fg.tensor([0.0, 2.0, -1.0], requires_grad=True)
    x = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = np.where(c, x, c)
    np.testing.assert_array_equal(out.detach().numpy(), np.where([0.0, 2.0, -1.0], [1.0, 2.0, 3.0], [0.0, 2.0, -1.0]))
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(c.grad.numpy(), [1.0, 0.0, 0.0])


# ----- values and dtypes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [np.var, np.std])
@pytest.mark.parametrize("ddof", [2, 3])
def test_var_with_ddof_at_least_the_count_has_no_finite_derivative(fn: Any, ddof: int) -> None:
    """With ``ddof >= N`` the value is inf (NumPy's and torch's), but the gradient was finite for ``ddof > N``
    (``np.var([1., 2.], ddof=3)`` had gradient [1, -1], as if divided by N - ddof = -1): now inf/NaN, as torch."""
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(RuntimeWarning):
        out = fn(x, ddof=ddof)
        assert out.item() == np.inf
        out.backward()
    assert not np.any(np.isfinite(x.grad.numpy()))


@pytest.mark.parametrize("fn", [np.var, np.std])
def test_a_fractional_ddof_is_not_truncated(fn: Any) -> None:
    """``np.var(t, ddof=0.5)`` divided by N (ddof truncated to 0): 1.5556 for [1, 2, 4], NumPy's and torch's 1.8667."""
    values = np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
    x = fg.tensor(values, requires_grad=True)
    for ddof in (0.5, 1.5):
        np.testing.assert_allclose(fn(x, axis=1, ddof=ddof).detach().numpy(), fn(values, axis=1, ddof=ddof))
        assert gradcheck(lambda t, d=ddof: fn(t, axis=1, ddof=d), (x,))
        assert gradgradcheck(lambda t, d=ddof: fn(t, axis=1, ddof=d), (x,))


@pytest.mark.parametrize("ufunc,values", [(np.fabs, np.array([-2, 3])), (np.fabs, np.array([-2, 3], np.int8)),
                                          (np.fabs, np.array([True, False])), (np.rint, np.array([-2, 3])),
                                          (np.rint, np.array([1, 3], np.uint8)), (np.conjugate, np.array([True])),
                                          (np.positive, np.array([1, 2], np.int16))])
def test_ufuncs_give_numpys_result_dtype(ufunc: Any, values: np.ndarray) -> None:
    """``np.fabs`` and ``np.rint`` of integers are floats in NumPy (they were integers) and ``np.conjugate`` of a
    bool is int8 (it was bool)."""
    expected = ufunc(values)
    got = ufunc(fg.tensor(values))
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.numpy(), expected)


def test_ufuncs_without_a_loop_for_the_dtype_raise_as_numpy() -> None:
    """``np.fabs`` of a complex Tensor was its modulus and ``np.positive`` of a bool a copy: NumPy refuses both."""
    with pytest.raises(TypeError, match="fabs"):
        np.fabs(fg.tensor([1.0 + 1.0j]))
    with pytest.raises(TypeError, match="positive"):
        np.positive(fg.tensor([True]))


def test_pinv_drops_singular_values_below_numpys_default_cutoff() -> None:
    """NumPy's default ``rcond`` is 1e-15; funcgrad's was torch's max(m, n) * eps, which is larger from 5 x 5 on:
    a singular value of 1.5e-15 (times the largest) was dropped where NumPy inverts it."""
    u, _ = np.linalg.qr(_rng.normal(size=(10, 10)))
    a = u @ np.diag(np.r_[np.ones(9), 1.5e-15]) @ u.T
    np.testing.assert_allclose(np.linalg.pinv(fg.tensor(a)).numpy(), np.linalg.pinv(a), rtol=1e-6)
    np.testing.assert_allclose(np.linalg.pinv(fg.tensor(a), rtol=None).numpy(), np.linalg.pinv(a, rtol=None))


@pytest.mark.parametrize("fn", [np.linalg.inv, np.linalg.det, np.linalg.slogdet])
def test_linalg_functions_take_numpys_parameter_name(fn: Any) -> None:
    a = fg.tensor(_SPD, requires_grad=True)
    got, expected = fn(a=a), fn(_SPD)
    for g, e in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, expected)), strict=True):
        np.testing.assert_allclose(g.detach().numpy(), e)


def test_accumulate_over_no_axis_raises_as_numpy() -> None:
    """``np.add.accumulate(t, axis=None)`` was the cumulative sum of the flattened Tensor; NumPy refuses it."""
    with pytest.raises(ValueError, match="accumulate does not allow multiple axes"):
        np.add.accumulate(fg.tensor(np.ones((2, 3)), requires_grad=True), axis=None)


_A = _rng.normal(size=(3, 4))
_NUMPY_INTEGER_CALLS = {
    "expand_dims": lambda t: np.expand_dims(t, np.int64(0)), "squeeze": lambda t: np.squeeze(t[:, None], np.int32(1)),
    "reshape": lambda t: np.reshape(t, np.int64(12)), "tile": lambda t: np.tile(t, np.int64(2)),
    "norm": lambda t: np.linalg.norm(t, axis=np.int32(1)),
    "norm ord": lambda t: np.linalg.norm(t, np.int64(1), np.intp(0)),
    "tensordot": lambda t: np.tensordot(t, t.T, np.int64(1)),
    "broadcast_to": lambda t: np.broadcast_to(t[0], np.int64(4)),
    "average": lambda t: np.average(t, axis=np.int64(1), weights=np.arange(1.0, 5.0)),
}


@pytest.mark.parametrize("name", list(_NUMPY_INTEGER_CALLS))
def test_numpy_integers_as_axes_and_sizes(name: str) -> None:
    """Axes and sizes that are NumPy integers (``np.argmax(...)``, ``a.shape`` of an array, ...) raised a TypeError
    ("'numpy.int64' object is not iterable") or an IndexError in these functions."""
    call = _NUMPY_INTEGER_CALLS[name]
    t = fg.tensor(_A, requires_grad=True)
    np.testing.assert_allclose(call(t).detach().numpy(), call(_A))
    assert gradcheck(call, (t,))


def test_axes_out_of_range_or_repeated_raise() -> None:
    """``np.expand_dims`` of a 2-D Tensor at axis 3 gave shape (1, 3, 4) (the axis wrapped around) and at (0, 0) a
    4-D Tensor; ``np.sum(t, axis=(0, 0))`` summed axis 0 once. NumPy and torch raise."""
    t = fg.tensor(_A, requires_grad=True)
    with pytest.raises(np.exceptions.AxisError):
        np.expand_dims(t, 3)
    with pytest.raises(ValueError, match="repeated axis"):
        np.expand_dims(t, (0, 0))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        np.sum(t, axis=(0, -2))
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        fg.amax(t, (1, 1))
    assert np.expand_dims(t, (-1, 0)).shape == np.expand_dims(_A, (-1, 0)).shape == (1, 3, 4, 1)


def test_funcgrad_numpy_array_takes_ndmin() -> None:
    """``funcgrad.numpy.array([x[0], x[1]], ndmin=2)`` had shape (2,): ``ndmin`` was dropped for Tensors."""
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    for data, ndmin in (([x[0], x[1]], 2), (x, 3), (x[0], 1), (x, 1)):
        got = fnp.array(data, ndmin=ndmin)
        assert got.shape == np.array(np.array(data.detach().numpy() if isinstance(data, fg.Tensor) else
                                              [d.detach().numpy() for d in data]), ndmin=ndmin).shape
    copied = fnp.array(x, ndmin=2)
    with fg.no_grad():
        copied[0, 0] = 5.0
    assert x[0].item() == 1.0  # a copy, as NumPy's (copy=True), not a view of x
    fg.autograd.backward(fnp.array(x, ndmin=2, dtype=np.float32).sum())
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


# ----- arguments NumPy checks -------------------------------------------------------------------------------
@pytest.mark.parametrize("indices", [[3, 1], [2, 9], [4, 2, 3], [-2, 1], [0, 0, 5]])
def test_split_at_indices_out_of_order_gives_numpys_pieces(indices: list[int]) -> None:
    """``np.split(t, [3, 1])`` is t[:3], t[3:1], t[1:]: the last piece had 2 elements instead of 4 (pieces were
    laid end to end from their lengths)."""
    v = _rng.normal(size=5)
    t = fg.tensor(v, requires_grad=True)
    for fn in (np.split, np.array_split):
        got, expected = fn(t, indices), fn(v, indices)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g.detach().numpy(), e)
    assert gradcheck(lambda x: np.split(x, indices)[-1], (t,))


def test_where_with_x_but_no_y_raises_as_numpy() -> None:
    """``np.where(c, t)`` gave an object array holding None where c is false."""
    with pytest.raises(ValueError, match="either both or neither of x and y should be given"):
        np.where(np.array([True, False]), fg.tensor([1.0, 2.0], requires_grad=True))


def test_negative_widths_and_orders_raise_as_numpy() -> None:
    """``np.pad(t, -1)`` cropped the Tensor (torch's negative padding) and ``np.diff(t, n=-1)`` returned it
    unchanged; NumPy raises for both."""
    t = fg.tensor(_A, requires_grad=True)
    with pytest.raises(ValueError, match="index can't contain negative values"):
        np.pad(t, ((0, 0), (1, -1)))
    with pytest.raises(ValueError, match="order must be non-negative but got -1"):
        np.diff(t, n=-1)


def test_average_with_weights_summing_to_zero_raises_as_numpy() -> None:
    """It gave NaN where NumPy raises ZeroDivisionError."""
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        np.average(fg.tensor(_A, requires_grad=True), axis=1, weights=np.array([1.0, -1.0, 2.0, -2.0]))


def test_norm_of_integers_is_a_float_and_clip_takes_no_bounds() -> None:
    """``np.linalg.norm`` of an int Tensor with ``ord=1`` was int64 (NumPy's norms are floats); ``np.clip(t)``
    raised where NumPy 2 returns the values."""
    ints = np.arange(-3, 9).reshape(3, 4)
    for ord_ in (1, np.inf, None):
        got, expected = np.linalg.norm(fg.tensor(ints), ord_), np.linalg.norm(ints, ord_)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got.numpy(), expected)
    t = fg.tensor(_A, requires_grad=True)
    np.testing.assert_array_equal(np.clip(t).detach().numpy(), np.clip(_A))
    assert gradcheck(lambda x: np.clip(x, None, None), (t,))


_DTYPE_CALLS = {
    "sum": lambda a: np.sum(a, dtype=int), "prod": lambda a: np.prod(a, dtype=int),
    "mean": lambda a: np.mean(a, dtype=int), "cumsum": lambda a: np.cumsum(a, dtype=int),
    "cumprod": lambda a: np.cumprod(a, dtype=np.int32), "trace": lambda a: np.trace(np.diag(a), dtype=int),
    "cumulative_sum": lambda a: np.cumulative_sum(a, dtype=int), "nansum": lambda a: np.nansum(a, dtype=int),
    "add.reduce": lambda a: np.add.reduce(a, dtype=int), "add.accumulate": lambda a: np.add.accumulate(a, dtype=int),
    "sum float32": lambda a: np.sum(a, dtype=np.float32), "sin float32": lambda a: np.sin(a, dtype=np.float32),
    "multiply.outer float32": lambda a: np.multiply.outer(a, a, dtype=np.float32),
    "add.reduce int16": lambda a: np.add.reduce(a, dtype=np.int16),
    "add.accumulate int16": lambda a: np.add.accumulate(a, dtype=np.int16),
}


@pytest.mark.parametrize("name", list(_DTYPE_CALLS))
def test_dtype_is_the_type_numpy_computes_in(name: str) -> None:
    """``dtype=`` converts the input first: ``np.sum([1.5, 1.5, 2.7], dtype=int)`` is 1 + 1 + 2 = 4 in NumPy; it
    was 5 (the float sum converted), and ``np.sin(t, dtype=np.float32)`` was sin in float64 rounded."""
    values = np.array([1.5, 1.5, 2.7, -0.6])
    call = _DTYPE_CALLS[name]
    got, expected = call(fg.tensor(values, requires_grad=True)), call(values)
    assert got.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got.detach().numpy(), expected)


def test_dtype_conversions_numpy_refuses_raise() -> None:
    """``np.add(t, 1, dtype=int)`` and ``np.concatenate([t, t], dtype=int)`` of a float Tensor truncated the values;
    NumPy raises unless ``casting='unsafe'``."""
    t = fg.tensor([1.5, 2.7], requires_grad=True)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' input 0 from dtype\\('float64'\\) to "
                                        "dtype\\('int64'\\) with casting rule 'same_kind'"):
        np.add(t, 1, dtype=int)
    for join in (np.concatenate, np.stack, np.vstack, np.hstack):
        with pytest.raises(TypeError, match="according to the rule 'same_kind'"):
            join([t, t], dtype=int)
    np.testing.assert_array_equal(np.concatenate([t, t], dtype=int, casting="unsafe").numpy(), [1, 2, 1, 2])


@pytest.mark.parametrize("call", [lambda x: np.linalg.pinv(x, rcond=0.5), lambda x: fg.linalg.pinv(x, atol=0.9),
                                  lambda x: np.linalg.lstsq(x, np.arange(3.0), rcond=0.5)[0]])
@pytest.mark.parametrize("complex_", [False, True])
def test_pinv_that_drops_singular_values_has_their_derivative(call: Any, complex_: bool) -> None:
    """A cutoff that drops a singular value that is not 0 (0.46 of [1.96, 1.37, 0.46] for rcond=0.5) makes pinv
    the inverse of a lower-rank matrix, whose derivative is not Golub-Pereyra's constant-rank formula: the
    gradient was that formula's (as torch's), off by up to 0.16 from finite differences; now through the SVD."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)) + (1j * rng.standard_normal((3, 4)) if complex_ else 0)
    assert gradcheck(call, (fg.tensor(a, requires_grad=True),), check_forward_ad=True)
    assert gradgradcheck(call, (fg.tensor(a, requires_grad=True),))


def test_complex_values_numpy_accepts_in_sign_imag_and_correlations() -> None:
    """``np.sign`` of a complex Tensor is z / |z| (NumPy 2, torch's sgn), ``np.imag`` of a real one is 0, and
    ``np.correlate``/``np.convolve`` take complex sequences: all three raised (torch's sign and imag refuse them,
    and the convolution op is real)."""
    z = np.array([1 + 1j, -2 + 0.5j, 0.3 - 1j])
    np.testing.assert_allclose(np.sign(fg.tensor(z)).numpy(), np.sign(z))
    np.testing.assert_array_equal(np.imag(fg.tensor([1.0, 2.0], requires_grad=True)).detach().numpy(), [0.0, 0.0])
    v = np.array([0.5 - 1j, 2j])
    for fn in (np.correlate, np.convolve):
        np.testing.assert_allclose(fn(fg.tensor(z), fg.tensor(v), "full").numpy(), fn(z, v, "full"))


@pytest.mark.parametrize("reduce", [lambda m: np.sum(m), lambda m: np.sum(m, dtype=np.float64),
                                    lambda m: np.sum(m, 1), lambda m: np.sum(m, axis=0, keepdims=True)])
def test_jit_keeps_np_sums_default_axis(reduce: Any) -> None:
    """jit recorded np.sum as np.add.reduce, whose axis defaults to 0: ``np.sum`` of a matrix without an axis came
    out as its column sums (shape (4,) for a 4 x 4 matrix; jit(grad(f)) then raised or was wrong)."""
    def f(x: Any) -> Any:
        return reduce(np.outer(x, x[::-1]) + np.diag(x))

    x = np.array([0.3, -1.2, 2.0, 0.9])
    expected = f(fg.tensor(x)).numpy()
    got = func.jit(f)(x)
    assert np.shape(got) == expected.shape
    np.testing.assert_allclose(got, expected)
    if expected.ndim == 0:
        np.testing.assert_allclose(func.jit(func.grad(f))(x), func.grad(f)(x))


def test_quantiles_of_values_with_nan_are_nan() -> None:
    """``np.median([[1, nan, 2, 0.5], ...], axis=1)`` gave 1.5 for the first row (NaN sorted last and skipped);
    NumPy's median, quantile and percentile are NaN there."""
    a = np.array([[1.0, np.nan, 2.0, 0.5], [3.0, 1.0, 2.0, 4.0]])
    t = fg.tensor(a, requires_grad=True)
    for call in (lambda x: np.median(x), lambda x: np.median(x, axis=1), lambda x: np.quantile(x, [0.1, 0.9], axis=1),
                 lambda x: np.percentile(x, 30, axis=0, keepdims=True)):
        np.testing.assert_array_equal(call(t).detach().numpy(), call(a))


def test_the_zero_norm_of_complex_values_is_real() -> None:
    """``vector_norm(z, ord=0)`` (the count of nonzeros) of a complex Tensor was complex128; torch's and NumPy's are
    real."""
    z = np.array([1 + 1j, 0j, -2j])
    for got in (fg.linalg.vector_norm(fg.tensor(z), 0), np.linalg.norm(fg.tensor(z), 0)):
        assert got.dtype == np.float64 and got.item() == 2.0


@pytest.mark.parametrize("ufunc", [np.add, np.subtract])
@pytest.mark.parametrize("index", [[0, 2, 0], np.array([4, 4, 4]), (np.array([1, 1, 3]),)])
def test_add_at_accumulates_into_a_tensor_in_place(ufunc: Any, index: Any) -> None:
    """``np.add.at(t, [0, 2, 0], v)`` (repeated indices add each time) raised "no derivative rule"."""
    a, b = np.arange(5.0), np.array([1.0, 2.0, 3.0])
    expected = a.copy()
    ufunc.at(expected, index, b)

    def f(x: Any, v: Any) -> Any:
        y = x * 1
        assert ufunc.at(y, index, v) is None
        return y

    x, v = fg.tensor(a, requires_grad=True), fg.tensor(b, requires_grad=True)
    np.testing.assert_array_equal(f(x, v).detach().numpy(), expected)
    assert gradcheck(f, (x, v)) and gradgradcheck(f, (x, v))
    with pytest.raises(TypeError, match="must be a Tensor"):
        ufunc.at(np.zeros(5), index, v)


def test_lists_beside_tensors() -> None:
    """A list operand beside a Tensor: ``np.tensordot(list, t)`` and ``np.inner`` raised AttributeError,
    ``np.trapezoid(t, list)`` a TypeError, ``np.convolve(list, t)``
    and ``np.select([[True, ...]], ...)`` NumPy's "Field elements must be 2- or 3-tuples", and ``np.pad`` with a
    Tensor as ``constant_values`` the error for converting a Tensor that requires grad. (NumPy dispatches np.pad
    on its first argument only: a Tensor ``constant_values`` beside an ndarray still reaches NumPy's own.)"""
    t = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    values, plain = [0.5, -1.0, 2.0], np.array([1.0, 2.0, 3.0])
    calls = [lambda x: np.tensordot(values, x, 1), lambda x: np.convolve(values, x),
             lambda x: np.correlate(x, values, "full"), lambda x: np.select([[True, False, True]], [x], 0.0),
             lambda x: np.pad(x, 1, constant_values=x[0] * 2), lambda x: np.inner(x, values),
             lambda x: np.trapezoid(x, [0.0, 1.0, 3.0])]
    for call in calls:
        np.testing.assert_allclose(call(t).detach().numpy(), call(plain))
        assert gradcheck(call, (t,))


_PRECISION_CALLS = {
    "median": lambda a: np.median(a, axis=1), "quantile": lambda a: np.quantile(a, [0.3, 0.6]),
    "quantile number": lambda a: np.quantile(a, 0.3, axis=0), "percentile": lambda a: np.percentile(a, 40, axis=1),
    "percentiles": lambda a: np.percentile(a, [10, 75]),
    "nanmean": np.nanmean, "nanvar": lambda a: np.nanvar(a, axis=0), "nanmax": np.nanmax, "cov": np.cov,
    "corrcoef": np.corrcoef, "fft": lambda a: np.fft.fft(a), "rfft": lambda a: np.fft.rfft(a, axis=0),
    "irfft": lambda a: np.fft.irfft(np.fft.rfft(a)), "logaddexp2": lambda a: np.logaddexp2(a, 1), "diff": np.diff,
}


@pytest.mark.parametrize("name", list(_PRECISION_CALLS))
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.complex64])
def test_result_dtypes_follow_numpy(name: str, dtype: Any) -> None:
    """float32 stayed float32 where NumPy keeps it and ints became float64 where NumPy makes them so: np.median of
    float32 was float64, np.cov of float32 float32 (NumPy: float64), np.fft.fft of float32 complex128 (NumPy:
    complex64), np.nanmax of ints float64, np.diff of bools an error."""
    a = (np.array([[0.3, -1.2, 2.0, 0.9], [1.5, 0.1, -0.4, -2.2], [-0.7, 1.1, 0.6, 1.9]]) * 3).astype(dtype)
    call = _PRECISION_CALLS[name]
    try:
        expected = call(a)
    except TypeError:
        return  # NumPy has no loop for this dtype
    got = call(fg.tensor(a))
    assert got.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)
