"""The table test of NumPy's entry points on Tensors: every ufunc, ufunc method and NumPy function funcgrad
dispatches has samples; through the NumPy entry point each gives NumPy's value, a Tensor with the graph
(never an ndarray), and passes gradcheck and gradgradcheck."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.check import gradcheck, gradgradcheck
from funcgrad.ops.numpy_functions import FUNCTIONS
from funcgrad.ops.numpy_protocols import UFUNCS
from tests.ops.samples_numpy import LIKE, PLAIN, SAMPLES
from tests.ops.sampling import S
from tests.ops.test_table import call_with

NONDIFF_UFUNCS = {np.floor_divide, np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
                  np.logical_and, np.logical_or, np.logical_xor, np.logical_not, np.isnan, np.isinf, np.isfinite}
METHODS = {(u, "reduce") for u in (np.add, np.multiply, np.maximum, np.minimum, np.logaddexp)} | \
          {(u, "accumulate") for u in (np.add, np.multiply)}


def _name(entry: Any) -> str:
    if isinstance(entry, tuple):
        return f"{entry[0].__name__}.{entry[1]}"
    return f"{getattr(entry, '__module__', None) or 'numpy'}.{entry.__name__}"


def _callable(entry: Any) -> Any:
    return getattr(entry[0], entry[1]) if isinstance(entry, tuple) else entry


CASES = [pytest.param(entry, case, id=f"{_name(entry)}-{i}") for entry in SAMPLES for i, case in
         enumerate(SAMPLES[entry])]


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, tuple | list) else [out]


def test_every_dispatched_entry_has_samples() -> None:
    dispatched = (set(UFUNCS) - NONDIFF_UFUNCS) | set(FUNCTIONS) | METHODS
    sampled = set(SAMPLES) | set(PLAIN) | set(LIKE)
    assert not dispatched - sampled, f"no samples: {sorted(map(_name, dispatched - sampled))}"
    assert not sampled - dispatched - {(np.multiply, "outer"), (np.subtract, "outer")}


@pytest.mark.parametrize("entry,case", CASES)
def test_value_is_numpys_and_a_tensor_with_the_graph(entry: Any, case: S) -> None:
    fn, inputs = call_with(_callable(entry), case)
    expected = _outputs(_callable(entry)(*case.args, **case.kwargs))
    got = _outputs(fn(*inputs))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if len(expected) > 1 and (np.result_type(e).kind not in "fc" or np.size(e) == 0):  # lstsq's rank, residuals
            assert not isinstance(g, fg.Tensor) and np.result_type(g) == np.result_type(e)
            np.testing.assert_array_equal(g, e)
            continue
        assert isinstance(g, fg.Tensor), f"{_name(entry)} returned {type(g).__name__}, not a Tensor"
        assert g.requires_grad and g.dtype == np.result_type(e)
        np.testing.assert_allclose(g.detach().numpy(), e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("entry,case", CASES)
def test_gradcheck(entry: Any, case: S) -> None:
    fn, inputs = call_with(_callable(entry), case)
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("entry,case", CASES)
def test_gradgradcheck(entry: Any, case: S) -> None:
    fn, inputs = call_with(_callable(entry), case)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("entry,case", [pytest.param(e, c, id=_name(e)) for e in PLAIN for c in PLAIN[e]])
def test_entries_without_a_derivative_give_numpys_plain_result(entry: Any, case: S) -> None:
    fn, inputs = call_with(entry, case)
    got, expected = _outputs(fn(*inputs)), _outputs(entry(*case.args, **case.kwargs))
    for g, e in zip(got, expected, strict=True):
        assert not isinstance(g, fg.Tensor)
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("ufunc", sorted(NONDIFF_UFUNCS, key=lambda u: u.__name__), ids=lambda u: u.__name__)
def test_ufuncs_without_a_derivative_give_tensors_that_do_not_require_grad(ufunc: np.ufunc) -> None:
    """As the operators do (``t > 0`` is a bool Tensor): same result whether written ``t > 0`` or ``np.greater``."""
    x = fg.tensor([0.5, -1.0, np.nan, 2.0], requires_grad=True)
    y = np.array([1.0, -1.0, 0.0, 0.5])
    args = (x,) if ufunc.nin == 1 else (x, y)
    out = ufunc(*args)
    assert isinstance(out, fg.Tensor) and not out.requires_grad
    with fg.no_grad():
        np.testing.assert_array_equal(out.numpy(), ufunc(*[np.asarray(a) for a in args]))


@pytest.mark.parametrize("entry,case", [pytest.param(e, c, id=_name(e)) for e in LIKE for c in LIKE[e]])
def test_like_constructors_give_new_tensors(entry: Any, case: S) -> None:
    fn, inputs = call_with(entry, case)
    out, expected = fn(*inputs), entry(*case.args, **case.kwargs)
    assert isinstance(out, fg.Tensor) and not out.requires_grad
    assert out.shape == expected.shape and out.dtype == expected.dtype
    if entry is not np.empty_like:
        np.testing.assert_array_equal(out.numpy(), expected)
