"""Samples of elementwise ops (funcgrad/ops/derivatives/elementwise.py)."""
import numpy as np

from tests.ops.sampling import A, C, P, S, away_from  # noqa: F401

# value ranges where each elementwise op is smooth (hypothesis draws inside them)
DOMAINS: dict[str, tuple[float, float]] = {
    "add": (-3, 3), "sub": (-3, 3), "mul": (-3, 3), "div": (0.5, 3), "pow": (0.5, 2), "neg": (-3, 3),
    "reciprocal": (0.5, 3),  # remainder: kinks wherever x / y is an integer, so samples only
    "exp": (-2, 2), "exp2": (-2, 2), "expm1": (-2, 2), "log": (0.2, 3), "log2": (0.2, 3),
    "log10": (0.2, 3), "log1p": (-0.5, 3), "sqrt": (0.2, 3), "rsqrt": (0.2, 3), "cbrt": (0.2, 3), "square": (-3, 3),
    "logaddexp": (-3, 3), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2), "asin": (-0.8, 0.8),
    "acos": (-0.8, 0.8), "atan": (-3, 3), "atan2": (0.3, 3), "hypot": (0.3, 3), "sinh": (-2, 2), "cosh": (-2, 2),
    "tanh": (-2, 2), "asinh": (-3, 3), "acosh": (1.2, 3), "atanh": (-0.8, 0.8), "sigmoid": (-3, 3),
    "tanh_backward": (-0.9, 0.9), "sigmoid_backward": (0.1, 0.9),  # (polynomials: any range; the outputs' ranges)
    "erf": (-2, 2), "erfc": (-2, 2), "erfinv": (-0.8, 0.8), "logaddexp2": (-3, 3), "xlogy": (0.2, 3),
    "lgamma": (0.3, 4), "digamma": (0.3, 4),
}

SAMPLES: dict[str, list[S]] = {
    # ----- elementwise ----------------------------------------------------------------------------
    "add": [S(A(3, 4), A(4)), S(A(), A(2, 3)), S(A(3), 2.5)],
    "sub": [S(A(3, 4), A(3, 1)), S(1.5, A(3))],
    "mul": [S(A(3, 4), A(4)), S(A(2, 1, 3), A(4, 1)), S(A(3), 2.0)],
    "div": [S(A(3, 4), P(4)), S(2.0, P(3)), S(A(2), P(2, 2))],
    "neg": [S(A(3, 2))],
    "pow": [S(P(3, 2), A(2)), S(A(4), 3), S(P(3), 0.5), S(2.0, A(3))],
    "remainder": [S(A(4, lo=0.1, hi=0.9) + np.array([0.0, 1.0, 2.0, 3.0]), np.array(1.5))],
    "reciprocal": [S(P(3, 2))],
    "floor_divide": [S(A(3), P(3))],
    "fmod": [S(np.array([-2.7, -0.4, 0.3, 1.6, 2.9]), np.array(1.3)),  # kinks where x / y is an integer
             S(np.array([[2.5], [-1.25]]), np.array([0.7, -0.9, 1.1]))],
    "frac": [S(np.array([-2.7, -0.4, 0.3, 1.6]))],
    "xlogy": [S(np.array([[0.5, -1.2, 2.0], [1.1, 0.3, -0.7]]), np.array([0.6, 1.4, 2.2])),
              S(np.array([0.0, 0.8]), np.array([1.5, 0.9])), S(1.5, np.array([0.5, 2.0]))],
    "exp": [S(A(3, 2))], "exp2": [S(A(3))], "expm1": [S(A(3))],
    "log": [S(P(3, 2))], "log2": [S(P(3))], "log10": [S(P(3))], "log1p": [S(P(3))],
    "sqrt": [S(P(3, 2))], "rsqrt": [S(P(3))], "square": [S(A(3, 2))],
    "cbrt": [S(np.array([[-2.7, -0.4], [0.3, 1.9]]))],  # (inf at 0)
    "logaddexp": [S(A(3, 2), A(2))],
    "sin": [S(A(3, 2))], "cos": [S(A(3))], "tan": [S(A(3, lo=-1, hi=1))],
    "asin": [S(A(3, lo=-0.8, hi=0.8))], "acos": [S(A(3, lo=-0.8, hi=0.8))], "atan": [S(A(3))],
    "atan2": [S(A(3, 2), P(2))],
    "hypot": [S(A(3, 2), P(2)), S(P(3), 1.5)],
    "sinh": [S(A(3))], "cosh": [S(A(3))], "tanh": [S(A(3, 2))], "asinh": [S(A(3))],
    "acosh": [S(A(3, lo=1.2, hi=3))], "atanh": [S(A(3, lo=-0.8, hi=0.8))],
    "sigmoid": [S(A(3, 2))],
    "tanh_backward": [S(A(3, 2), A(2, lo=-0.9, hi=0.9)), S(A(2), 0.5)],
    "sigmoid_backward": [S(A(3, 2), A(2, lo=0.1, hi=0.9)), S(0.5, A(3, lo=0.1, hi=0.9))],
    "relu": [S(away_from(A(5), (0.0,)))],
    "abs": [S(away_from(A(5), (0.0,)))],
    "sign": [S(away_from(A(5), (0.0,)))],
    "copysign": [S(away_from(A(3, 2), (0.0,)), A(2)), S(away_from(A(3), (0.0,)), -0.0)],  # -0.0 counts negative
    "floor": [S(away_from(A(5), (-2.0, -1.0, 0.0, 1.0, 2.0)))],
    "ceil": [S(away_from(A(5), (-2.0, -1.0, 0.0, 1.0, 2.0)))],
    "round": [S(away_from(A(5), (-1.5, -0.5, 0.5, 1.5)))],
    "trunc": [S(away_from(A(5), (-2.0, -1.0, 0.0, 1.0, 2.0)))],
    "maximum": [S(np.array([0.5, -1.0, 2.0]), np.array([1.0, -2.0, 0.0]))],
    "minimum": [S(np.array([0.5, -1.0, 2.0]), np.array([1.0, -2.0, 0.0]))],
    "fmax": [S(np.array([0.5, -1.0, 2.0]), np.array([1.0, -2.0, 0.0])), S(A(3, 2), A(2))],
    "fmin": [S(np.array([0.5, -1.0, 2.0]), np.array([1.0, -2.0, 0.0])), S(A(3, 2), A(2))],
    "clamp": [S(np.array([-1.5, -0.3, 0.2, 1.4]), min=-1.0, max=1.0),
              S(np.array([-1.5, 0.2, 1.4]), np.array([-1.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0]))],
    "where": [S(np.array([True, False, True]), A(3), A(2, 3))],
    "erf": [S(A(3))], "erfc": [S(A(3))], "lgamma": [S(P(3))], "digamma": [S(P(3))],
    "polygamma": [S(1, P(3)), S(2, P(2))],
    "erfinv": [S(np.array([-0.85, -0.2, 0.4, 0.7]))],
    "sinc": [S(np.array([[-1.7, -0.3], [0.45, 2.2]]))],
    "logaddexp2": [S(np.array([[-1.2, 0.4], [2.5, 0.1]]), np.array([0.7, -0.9])), S(np.array([3.0, -2.0]), 1.5)],
    "clone": [S(A(3, 2))],
    "to_copy": [S(A(2), np.float64)],  # float32 round-off defeats finite differences; see test_tensor
    "fill": [S(A(3), np.array(0.7))],
    "copy": [S(A(2, 3), A(3))],
    "eq": [S(A(3), A(3))], "ne": [S(A(3), A(3))], "lt": [S(A(3), A(3))], "le": [S(A(3), A(3))],
    "gt": [S(A(3), A(3))], "ge": [S(A(3), A(3))],
    "logical_and": [S(A(3), A(3))], "logical_or": [S(A(3), A(3))], "logical_xor": [S(A(3), A(3))],
    "logical_not": [S(A(3))], "isnan": [S(A(3))], "isinf": [S(A(3))], "isfinite": [S(A(3))],
}
SAMPLES.update({
    "conj_physical": [S(C(3, 2))], "real": [S(C(3)), S(A(3))], "imag": [S(C(3, 2))],
    "angle": [S(C(3)), S(away_from(A(3), (0.0,)))], "sgn": [S(C(3)), S(away_from(A(3), (0.0,)))],
    "polar": [S(P(3), A(3)), S(P(2, 3), A(3))],
})

# ----- complex values: gradients are conjugate Wirtinger derivatives, as torch's (away from branch cuts) ------
COMPLEX: dict[str, list[S]] = {
    "add": [S(C(3), A(3))], "sub": [S(C(3, 2), C(2))], "mul": [S(C(3), C(3)), S(A(3), C(3)), S(C(2, 3), 2.0)],
    "div": [S(C(3), C(3, lo=0.5)), S(A(3), C(3, lo=0.5))], "neg": [S(C(3))],
    "pow": [S(C(3, lo=0.5), 3), S(C(3, lo=0.5), C(3, lo=0.2, hi=1.0, im=0.5)), S(C(3, lo=0.5), A(3))],
    "reciprocal": [S(C(3, lo=0.5))], "exp": [S(C(3, 2))], "exp2": [S(C(3))], "expm1": [S(C(3))],
    "log": [S(C(3, lo=0.3))], "log2": [S(C(3, lo=0.3))], "log10": [S(C(3, lo=0.3))], "log1p": [S(C(3, lo=0.3))],
    "sqrt": [S(C(3, lo=0.3))], "rsqrt": [S(C(3, lo=0.3))], "square": [S(C(3))],
    "sin": [S(C(3, im=1.0))], "cos": [S(C(3, im=1.0))], "tan": [S(C(3, lo=-1.0, hi=1.0, im=0.5))],
    "asin": [S(C(3, lo=-0.5, hi=0.5, im=0.5))], "acos": [S(C(3, lo=-0.5, hi=0.5, im=0.5))],
    "atan": [S(C(3, lo=-0.5, hi=0.5, im=0.5))], "sinh": [S(C(3, im=1.0))], "cosh": [S(C(3, im=1.0))],
    "tanh": [S(C(3, lo=-1.0, hi=1.0, im=0.5))], "asinh": [S(C(3, lo=0.3, im=0.5))],
    "acosh": [S(C(3, lo=1.2, hi=3.0, im=0.5))], "atanh": [S(C(3, lo=-0.5, hi=0.5, im=0.5))],
    "sigmoid": [S(C(3, im=1.0))], "tanh_backward": [S(C(3), C(3, lo=-0.5, hi=0.5, im=0.5)), S(A(3), C(3))],
    "sigmoid_backward": [S(C(3), C(3, lo=0.1, hi=0.9, im=0.5)), S(C(3), A(3))],
    "abs": [S(C(3, lo=0.3))], "where": [S(np.array([True, False, True]), C(3), A(3))],
    "clone": [S(C(3))], "copy": [S(C(2, 3), A(3))], "fill": [S(C(3), np.array(0.7 + 0.2j))],
}
for _name, _cases in COMPLEX.items():
    SAMPLES[_name] = SAMPLES[_name] + _cases
