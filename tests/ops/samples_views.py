"""Samples of writing through views (funcgrad/ops/derivatives/views.py)."""
import funcgrad as fg
from tests.ops.sampling import A, S

SAMPLES: dict[str, list[S]] = {
    "alias": [S(A(2, 3))],
    "copy_slices": [S(A(6), A(2, 3), lambda b: fg.transpose(fg.reshape(b, (3, 2)), 0, 1)),
                    S(A(2, 3), A(3, 2), lambda b: fg.permute(b, (1, 0)))],
    "view_region": [S(A(6), lambda b: fg.transpose(fg.reshape(b, (3, 2)), 0, 1)), S(A(3, 4), lambda b: b[1:, ::2]),
                    S(A(2, 3), lambda b: fg.select(b, 0, 1))],
}
