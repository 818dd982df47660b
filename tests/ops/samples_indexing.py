"""Samples of indexing, joining and splitting ops (funcgrad/ops/derivatives/indexing.py)."""
import numpy as np

from tests.ops.sampling import A, P, S, away_from  # noqa: F401

_I = np.array  # integer index arrays become int Tensors at the top level (a tuple index must not start with one)

SAMPLES: dict[str, list[S]] = {
    # ----- indexing -------------------------------------------------------------------------------
    "getitem": [
        S(A(3, 4), 1), S(A(3, 4), (0, -1)), S(A(3, 4), (slice(None), slice(1, None, 2))),
        S(A(2, 3, 4), (Ellipsis, None, 1)), S(A(2, 3, 4), (None, 0, Ellipsis, slice(None, None, -1))),
        S(A(4, 3), _I([0, 2, 0, 0])),                      # repeated rows accumulate
        S(A(4, 3), ([1, 1, -1], [0, 0, 2])),               # lists, repeats and negatives
        S(A(3, 4), A(3, 4) > 0),                           # boolean mask
        S(A(3, 4, 2), ([[0], [2]], slice(None), _I([1, 0]))),  # advanced dims separated by a slice
        S(A(3, 4, 2), (Ellipsis, _I([1, 1]))),
    ],
    "index_put": [
        S(A(4, 3), ([0, 2],), A(2, 3)), S(A(4, 3), (slice(1, 3), 1), A(2)),
        S(A(4, 3), _I([1, 1, 3]), A(3), accumulate=True),  # repeats add up, values broadcast
        S(A(3, 4), A(3, 4) > 0.5, A()), S(A(3, 4), (Ellipsis, _I([0, 3])), 2.0),
    ],
    "narrow": [S(A(5, 3), 0, 1, 3), S(A(2, 6), -1, -4, 2), S(A(4), 0, 4, 0)],
    "select": [S(A(3, 4), 0, 1), S(A(3, 4), -1, -1), S(A(2, 3, 4), 1, 2)],
    # ----- gathering and scattering along a dim ---------------------------------------------------
    "gather": [S(A(3, 4), 0, _I([[0, 2, 2, 1], [2, 2, 0, 0]])), S(A(3, 4), 1, _I([[3, 3], [0, 1]])),
               S(A(2, 3, 2), -2, _I([[[1, 0]], [[2, 2]]]))],
    "index_select": [S(A(4, 3), 0, _I([3, 0, 3])), S(A(2, 5), 1, _I([4, 1])), S(A(2, 5), -1, _I(2))],
    "take_along_dim": [S(A(3, 4), _I([[0, 3], [1, 1], [2, 0]]), 1), S(A(3, 4), _I([[0, 0, 2, -1]]), 0),
                       S(A(1, 4), _I([[0], [3]]), 1), S(A(3, 4), _I([[11, 0], [0, 5]]))],
    "scatter": [S(A(3, 4), 0, _I([[0, 2, 1, 1], [1, 0, 2, 0]]), A(2, 4)),
                S(A(3, 4), 1, _I([[3], [0]]), A(3, 2)), S(A(3, 4), 1, _I([[0, 2]]), 1.5)],
    "scatter_add": [S(A(3, 4), 0, _I([[0, 0, 1, 1], [0, 2, 1, 0]]), A(2, 4)),
                    S(A(2, 5), 1, _I([[4, 4, 4], [0, 1, 0]]), A(2, 3))],
    "masked_fill": [S(A(3, 4), A(3, 4) > 0, 0.5), S(A(3, 4), A(4) > 0, A()), S(A(2, 3), A(2, 3) > 0, -1e9)],
    "pad": [S(A(2, 3), (1, 2)), S(A(2, 3, 4), (1, 0, -1, 2), value=3.0), S(A(2, 3), (0, 0, 2, 1), "constant", 1.0),
            S(A(2, 5), (2, 3), "reflect"), S(A(1, 3, 4), (2, 1, 1, 2), "replicate"), S(A(2, 4), (3, 4), "circular"),
            S(A(3, 4), (-1, 2), "reflect")],
    # ----- joining --------------------------------------------------------------------------------
    "cat": [S([A(2, 3), A(1, 3), A(4, 3)]), S([A(2, 3), A(2, 1)], 1), S((A(2, 3, 1), A(2, 3, 2)), dim=-1)],
    "stack": [S([A(2, 3), A(2, 3)]), S([A(2, 3), A(2, 3), A(2, 3)], -1), S([A(4), A(4)], 1)],
    # ----- splitting into views ---------------------------------------------------------------------
    "split": [S(A(5, 3), 2), S(A(5, 3), [1, 4]), S(A(2, 6), 4, -1), S(A(3, 4), [2, 0, 2], 1), S(A(2, 3), 3, 1)],
    "unbind": [S(A(3, 4)), S(A(3, 4), 1), S(A(2, 3, 2), -1)],
}
