"""GradcheckError reports: coordinates, counts, causes, summaries."""
from __future__ import annotations

import numpy as np

from funcgrad.check.report import GradcheckError, Mismatch, format_mismatch


def mismatch(numerical: np.ndarray, analytical: np.ndarray, out_shape, in_shape) -> Mismatch:
    return Mismatch("output 0", "input 1", numerical, analytical, np.full(numerical.shape, 1e-5), out_shape,
                    in_shape)


def test_worst_elements_have_multidimensional_coordinates() -> None:
    num = np.zeros((6, 4))
    ana = num.copy()
    ana[5, 3] = 1.0
    text = format_mismatch(mismatch(num, ana, (2, 3), (2, 2)))
    assert "1 of 24 elements" in text and "(1, 2)" in text and "(1, 1)" in text


def test_large_jacobians_are_summarised() -> None:
    num = np.random.default_rng(0).standard_normal((50, 50))
    text = format_mismatch(mismatch(num, -num, (50,), (50,)))
    assert "not shown" in text and "2500 of 2500" in text and len(text.splitlines()) < 20


def test_error_carries_check_and_indices() -> None:
    err = GradcheckError("batched", "msg", output_index=2, input_index=0)
    assert (err.check, err.output_index, err.input_index) == ("batched", 2, 0)
    assert isinstance(err, RuntimeError)
