"""GradcheckError reports: coordinates, counts, causes, summaries."""
from __future__ import annotations

import numpy as np

from funcgrad.check.diagnosis import Block, diagnose
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


def test_no_region_is_claimed_from_a_pair_of_elements() -> None:
    # fast mode walks few columns: one wrong element beside one right one fits any threshold between them
    num = np.full((4, 4), np.nan)
    num[[0, 1], [0, 1]] = [0.8, 0.3]
    ana = np.where(np.isnan(num), 0.0, num)
    ana[1, 1] = 0.6
    failed = np.zeros((4, 4), bool)
    failed[1, 1] = True
    x = np.array([0.2, 0.7, -1.0, 0.1])
    (line,) = diagnose([Block("output 0", "input 1", ana, num, failed, x, (4,), {})])
    assert "factor 2" in line and "region" not in line
    num[2:, 2:] = ana[2:, 2:] = np.diag([0.5, 0.4])  # with two more right elements below 0.7: a region
    (line,) = diagnose([Block("output 0", "input 1", ana, num, failed, x, (4,), {})])
    assert "wrong only in a region" in line
