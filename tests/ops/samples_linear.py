"""Samples of products and contractions (funcgrad/ops/derivatives/linear.py)."""

from tests.ops.sampling import A, C, P, S, away_from  # noqa: F401

SAMPLES: dict[str, list[S]] = {
    # ----- products -------------------------------------------------------------------------------
    "matmul": [S(A(3, 4), A(4, 2)), S(A(4), A(4)), S(A(4), A(4, 2)), S(A(3, 4), A(4)),
               S(A(2, 3, 4), A(4, 2)), S(A(3, 4), A(2, 4, 2)), S(A(4), A(2, 4, 3)), S(A(2, 3, 4), A(4)),
               S(A(2, 1, 3, 4), A(3, 4, 2))],
    "mm": [S(A(3, 4), A(4, 2))],
    "bmm": [S(A(2, 3, 4), A(2, 4, 2))],
    "dot": [S(A(4), A(4))],
    "vdot": [S(A(4), A(4))],
    "outer": [S(A(3), A(4))],
    "tensordot": [S(A(2, 3, 4), A(3, 4, 2)), S(A(3, 4), A(4, 2), 1), S(A(2, 3), A(4), 0),
                  S(A(2, 3, 4), A(4, 2, 3), ([1, 2], [2, 0])), S(A(3, 4), A(4, 3), dims=([-1], [0]))],
    "einsum": [S("ij,jk->ik", A(2, 3), A(3, 4)), S("ii->i", A(3, 3)), S("ii", A(3, 3)),
               S("bij,bjk->bik", A(2, 3, 4), A(2, 4, 2)), S("ij->", A(2, 3)), S("ij,j", A(2, 3), A(3)),
               S("...ij,...jk->...ik", A(2, 3, 4), A(4, 2)), S("i,j,k->ijk", A(2), A(3), A(2)),
               S("iij->ji", A(2, 2, 3)), S("ij,ik->j", A(2, 3), A(2, 4)), S("...i,...i", A(1, 3), A(2, 3))],
}

COMPLEX: dict[str, list[S]] = {  # complex values: the other operand is conjugated, as torch's rules
    "matmul": [S(C(3, 4), C(4, 2)), S(C(4), C(4)), S(C(4), A(4, 2)), S(C(2, 3, 4), C(4))],
    "mm": [S(C(3, 4), C(4, 2))], "bmm": [S(C(2, 3, 4), C(2, 4, 2))], "dot": [S(C(4), C(4))],
    "vdot": [S(C(4), C(4)), S(A(4), C(4))], "outer": [S(C(3), C(4))],
    "tensordot": [S(C(2, 3, 4), C(3, 4, 2))], "einsum": [S("ij,jk->ik", C(2, 3), C(3, 4)), S("ii", C(3, 3))],
}
for _name, _cases in COMPLEX.items():
    SAMPLES[_name] = SAMPLES[_name] + _cases
