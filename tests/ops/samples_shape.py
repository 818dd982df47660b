"""Samples of shape and view ops (funcgrad/ops/derivatives/shape.py)."""

from tests.ops.sampling import A, P, S, away_from  # noqa: F401

SAMPLES: dict[str, list[S]] = {
    # ----- shape ----------------------------------------------------------------------------------
    "reshape": [S(A(3, 4), (2, 6)), S(A(6), (-1, 3)), S(A(), (1, 1))],
    "broadcast_to": [S(A(3, 1), (2, 3, 4))],
    "permute": [S(A(2, 3, 4), (2, 0, 1))],
    "transpose": [S(A(2, 3, 4), 0, -1)],
}
