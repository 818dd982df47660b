"""Samples of reductions (funcgrad/ops/derivatives/reduction.py)."""
import numpy as np

from tests.ops.sampling import A, C, P, S, away_from  # noqa: F401

_DISTINCT = np.array([[0.3, -1.2, 2.0, 0.9], [1.5, 0.1, -0.4, -2.2], [-0.7, 1.1, 0.6, 1.9]])  # no ties
_WITH_ZEROS = np.array([[0.0, 1.5, -0.8], [1.2, 0.0, 0.0], [0.7, -1.3, 0.9]])
_LCSE_0, _LCSE_1 = (np.logaddexp.accumulate(_DISTINCT, axis=d) for d in (0, 1))  # logcumsumexp(_DISTINCT, d)

SAMPLES: dict[str, list[S]] = {
    # ----- sums and moments -------------------------------------------------------------------------
    "sum_to": [S(A(2, 3, 4), (3, 1)), S(A(3), (3,))],
    "sum": [S(A(3, 4)), S(A(3, 4), 1), S(A(2, 3, 4), dim=(0, 2), keepdim=True), S(A()), S(A(), 0)],
    "mean": [S(A(3, 4)), S(A(3, 4), dim=-1), S(A(2, 3, 4), dim=(0, 2), keepdim=True), S(A(), 0), S(A(), -1, True)],
    "var": [S(A(3, 4)), S(A(3, 4), 1), S(A(2, 3, 4), dim=(0, -1), keepdim=True, correction=0),
            S(A(5), correction=2), S(A(), 0, correction=0), S(A(), (-1,), keepdim=True, correction=0)],
    "std": [S(A(3, 4)), S(A(3, 4), -1, keepdim=True), S(A(2, 3, 4), (1, 2), correction=0), S(A(), 0, correction=0)],
    "prod": [S(A(3, 4)), S(A(3, 4), 1), S(A(2, 3, 4), dim=(0, 2), keepdim=True), S(A()),
             S(_WITH_ZEROS), S(_WITH_ZEROS, 0), S(_WITH_ZEROS, -1, keepdim=True), S(A(), 0), S(A(), -1, True)],
    # ----- extremes ---------------------------------------------------------------------------------
    "amax": [S(_DISTINCT), S(_DISTINCT, 0), S(_DISTINCT, (0, 1), keepdim=True), S(A())],
    "amin": [S(_DISTINCT), S(_DISTINCT, -1, keepdim=True)],
    "argmax": [S(_DISTINCT), S(_DISTINCT, 1), S(_DISTINCT, 0, keepdim=True)],
    "argmin": [S(_DISTINCT), S(_DISTINCT, -1)],
    "argsort": [S(_DISTINCT), S(_DISTINCT, 0, True), S(np.array([1.0, np.nan, 1.0, -2.0]), -1, True, True)],
    # ----- smooth reductions, scans and normalizations ----------------------------------------------
    "logsumexp": [S(A(3, 4), 1), S(A(2, 3, 4), (0, 2), keepdim=True), S(A(), 0),
                  S(np.array([800.0, 801.0, 799.0]), 0)],
    "cumsum": [S(A(3, 4), 1), S(A(2, 3, 4), -3), S(A(), 0)],
    "logcumsumexp": [S(_DISTINCT, 1), S(_DISTINCT * 300, 0), S(np.array(0.7), 0)],
    # (grad_output or tangent, x, output, dim): with zeros, batch dims in front, a 0-d x
    "logcumsumexp_backward": [S(_WITH_ZEROS, _DISTINCT[:, :3], _LCSE_1[:, :3], 1), S(A(2, 3, 4), _DISTINCT, _LCSE_0, 0),
                              S(A(3), np.array(0.7), np.array(0.7), 0)],
    "logcumsumexp_tangent": [S(_WITH_ZEROS, _DISTINCT[:, :3], _LCSE_1[:, :3], 1), S(A(2, 3, 4), _DISTINCT, _LCSE_0, 0),
                             S(A(3), np.array(0.7), np.array(0.7), 0)],
    "cumprod": [S(A(3, 4), 1), S(A(2, 3, 4), -2), S(A(), 0), S(_WITH_ZEROS, 0), S(_WITH_ZEROS, 1)],
    "norm": [S(A(3, 4)), S(A(3, 4), 3, 1), S(A(3, 4), 1.5, (0, 1), keepdim=True), S(A(3, 4), 0.5, -1),
             S(A(3, 4), "fro", 0), S(A(3, 4), 1, 1), S(_DISTINCT, np.inf, 1), S(_DISTINCT, -np.inf)],
    "softmax": [S(A(3, 4), 1), S(A(2, 3, 4), -3), S(A(), 0), S(np.array([1000.0, 999.0, 998.5]), 0)],
    "log_softmax": [S(A(3, 4), 0), S(A(2, 3, 4), -1), S(np.array([1000.0, 999.0, 998.5]), 0)],
}

_COMPLEX_ZEROS = _WITH_ZEROS * (1 - 0.5j)
COMPLEX: dict[str, list[S]] = {  # complex values: gradients as torch's (see tests/test_complex.py)
    "sum_to": [S(C(2, 3), (3,))], "sum": [S(C(3, 4), 1)], "mean": [S(C(3, 4))],
    "var": [S(C(3, 4), 1)], "std": [S(C(3, 4), -1, keepdim=True)],
    "prod": [S(C(3, 4), 1), S(_COMPLEX_ZEROS), S(_COMPLEX_ZEROS, 0)],
    "cumsum": [S(C(3, 4), 1)], "cumprod": [S(C(3, 4), 1), S(_COMPLEX_ZEROS, 0)],
    "norm": [S(C(3, 4)), S(C(3, 4), 3, 1), S(C(3, 4), 0.5, -1), S(C(3, 4), np.inf, 1)],
}
for _name, _cases in COMPLEX.items():
    SAMPLES[_name] = SAMPLES[_name] + _cases
