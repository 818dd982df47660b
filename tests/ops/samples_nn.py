"""Samples of convolution and pooling (funcgrad/ops/derivatives/nn.py), in the normalized form
``funcgrad.nn.functional`` passes: tuples per spatial dim, convolution paddings as (before, after) pairs."""
import numpy as np

from tests.ops.sampling import A, S

_NO_PAD2 = ((0, 0), (0, 0))


def _distinct(*shape: int) -> np.ndarray:
    """Values at least 0.05 apart (a shuffled ramp), so max pooling's winners are not near ties."""
    n = int(np.prod(shape))
    return np.random.default_rng(7).permutation(np.linspace(-2.0, 2.0, n)).reshape(shape)


SAMPLES: dict[str, list[S]] = {
    # ----- linear maps ----------------------------------------------------------------------------
    "linear": [S(A(4, 3), A(2, 3), A(2)), S(A(3), A(2, 3), None), S(A(2, 4, 3), A(2, 3), A(1, 2)),
               S(A(4, 3), A(2, 3), A(4, 2))],
    # ----- classification losses ------------------------------------------------------------------
    "cross_entropy": [S(A(5, 4), np.array([0, 3, -100, 1, 2])), S(A(4), np.array(2), None, -100, "sum"),
                      S(A(2, 3, 2, 2), np.array([[[0, 2], [1, 1]], [[2, 0], [-1, 1]]]), (1.0, 2.0, 0.5), -1, "none"),
                      S(A(3, 4), np.array([1, 1, 3]), (0.5, 1.5, 1.0, 2.0), -100, "mean")],
    "binary_cross_entropy": [S(A(4, 3, lo=0.1, hi=0.9), A(4, 3, lo=0.0, hi=1.0)),
                             S(A(5, lo=0.1, hi=0.9), A(5, lo=0.0, hi=1.0), (0.5, 1.5, 1.0, 2.0, 0.7), "sum"),
                             S(A(2, 3, lo=0.1, hi=0.9), A(2, 3, lo=0.0, hi=1.0), ((0.5,), (2.0,)), "none"),
                             S(A(lo=0.2, hi=0.8), A(lo=0.0, hi=1.0), None, "mean")],
    # ----- convolutions ---------------------------------------------------------------------------
    "convolution": [S(A(2, 3, 5, 5), A(4, 3, 3, 3), A(4), (1, 1), _NO_PAD2, (1, 1), 1),
                    S(A(1, 2, 6, 5), A(3, 2, 2, 3), None, (2, 1), ((1, 1), (0, 2)), (1, 1), 1),
                    S(A(2, 4, 5, 5), A(4, 2, 2, 2), A(4), (1, 2), ((1, 0), (1, 1)), (2, 1), 2),
                    S(A(2, 2, 7), A(3, 2, 3), A(3), (2,), ((1, 1),), (1,), 1)],
    "convolution_transpose": [S(A(2, 3, 3, 3), A(3, 2, 3, 3), A(2), (2, 2), ((1, 1), (0, 0)), (1, 0), 1, (1, 1)),
                              S(A(1, 4, 3, 2), A(4, 1, 2, 2), None, (1, 2), _NO_PAD2, (0, 1), 2, (2, 1)),
                              S(A(2, 2, 4), A(2, 3, 3), A(3), (2,), ((1, 1),), (1,), 1, (1,))],
    "convolution_weight": [S(A(2, 3, 5, 5), A(2, 4, 3, 3), (3, 3), (1, 1), _NO_PAD2, (1, 1), 1),
                           S(A(1, 4, 6, 5), A(1, 4, 3, 2), (2, 3), (2, 2), ((1, 0), (0, 1)), (1, 1), 2),
                           S(A(2, 2, 7), A(2, 3, 3), (3,), (2,), ((1, 1),), (1,), 1),
                           S(A(2, 1, 6, 6), A(2, 3, 4, 5), (2, 2), (1, 1), _NO_PAD2, (2, 1), 1)],  # per sample
    # ----- pooling --------------------------------------------------------------------------------
    "max_pool": [S(_distinct(2, 2, 4, 4), (2, 2), (2, 2), (0, 0), (1, 1), False),
                 S(_distinct(1, 2, 5, 6), (3, 2), (2, 1), (1, 1), (1, 2), True),
                 S(_distinct(2, 3, 7), (3,), (2,), (1,), (1,), False)],
    "max_unpool": [S(A(2, 2, 2, 2), np.array([[[[0, 3], [9, 14]], [[5, 5], [10, 15]]]] * 2), (4, 4))],
    "avg_pool": [S(A(2, 2, 4, 4), (2, 2), (2, 2), (0, 0), False, True, None),
                 S(A(1, 2, 5, 6), (3, 2), (2, 1), (1, 1), True, False, None),
                 S(A(1, 2, 5, 5), (3, 3), (2, 2), (1, 1), True, True, None),
                 S(A(2, 3, 7), (3,), (2,), (1,), False, True, 2)],
    "adaptive_avg_pool": [S(A(2, 3, 5, 7), (2, 3)), S(A(2, 3, 7), (3,)), S(A(1, 2, 4, 4), (4, 1))],
}
