"""Samples of reductions (funcgrad/ops/derivatives/reduction.py)."""

from tests.ops.sampling import A, P, S, away_from  # noqa: F401

SAMPLES: dict[str, list[S]] = {
    # ----- reductions -----------------------------------------------------------------------------
    "sum_to": [S(A(2, 3, 4), (3, 1)), S(A(3), (3,))],
    "sum": [S(A(3, 4)), S(A(3, 4), 1), S(A(2, 3, 4), dim=(0, 2), keepdim=True), S(A())],
    "mean": [S(A(3, 4)), S(A(3, 4), dim=-1), S(A(2, 3, 4), dim=(0, 2), keepdim=True)],
}
