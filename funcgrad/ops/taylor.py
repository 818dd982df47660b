"""Taylor-mode rules of the op table (used by ``funcgrad.func.jet``): one ``deftaylor`` entry per op.

A rule maps one op call, seen as a ``TaylorCall`` ``c``, to the series of the op's result: a stacked
``(K + 1, *out.shape)`` array of normalized Taylor coefficients (see ``series.py``). Names a rule may use:
  c.x, c.y    the series of the op's first and second tensor inputs (None: constant along the curve)
  c.dx        the degree of c.x when known (a line x_0 + x_1 t has degree 1): higher terms are skipped
  c.out       the op's primal result;  c.arg("dim") any argument of the op by its parameter name
  c.linear()  the series pushed through the op's own JVP rule (ops/jvp.py), all K coefficients as one
              batch of tangents: the whole rule of a linear op, and of a product with a constant factor
              (``c.linear(series)``: other series, one per tensor input, pushed through it)
  c.operand(i) input i's series, or its value as a constant series;  c.axes  the value dims ``dim`` names
Rules compute on arrays only (plain NumPy, so ``func.jit`` records them). Three kinds of entries:
  deflinear(...)             linear (and piecewise-linear) ops: ``c.linear()``
  deftaylor(name, product)   bilinear ops: the Cauchy product of the operands' series
  deftaylor(name, rule)      smooth ops: a recurrence of series.py
A multi-output op's rule returns one series per output. An op without an entry has ``taylor = None``; ``jet``
raises ``NoTaylorRule`` naming it, as a rule does at a point it cannot expand.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special as sp

import funcgrad.ops as F
from funcgrad.core.tensor import Tensor
from funcgrad.ops import formulas as R
from funcgrad.ops import kernels as K
from funcgrad.ops import series as S
from funcgrad.ops.derivatives.linalg import _hermitian_from_lower, _is_vector_rhs, cholesky_jvp
from funcgrad.ops.derivatives.linear import explicit_subscripts
from funcgrad.ops.derivatives.nn import BCE_EPS, target_shares
from funcgrad.ops.jvp import _jvp
from funcgrad.ops.registry import OPS, OpSpec

__all__ = ["TaylorCall", "NoTaylorRule", "deftaylor", "deflinear", "degree"]

LN2, LN10 = math.log(2.0), math.log(10.0)


class NoTaylorRule(NotImplementedError):
    """A series reached an op without a Taylor-mode rule, or a point where its rule has no expansion."""


class TaylorCall:
    """One op call as a Taylor rule sees it."""

    __slots__ = ("spec", "args", "series", "out", "degrees")

    def __init__(self, spec: OpSpec, args: tuple[Any, ...], series: list[Any], out: Any,
                 degrees: list[int | None]) -> None:
        self.spec = spec
        self.args = args        # the op's arguments, arrays for tensors
        self.series = series    # one per tensor input (per element of a sequence input), or None
        self.out = out
        self.degrees = degrees  # per input: coefficients above it are known to be zero (None: not known)

    @property
    def x(self) -> Any:
        """The first tensor input's series."""
        return self.series[0]

    @property
    def y(self) -> Any:
        """The second tensor input's series."""
        return self.series[1]

    @property
    def dx(self) -> int | None:
        """The first tensor input's degree: its coefficients above it are zero (None: not known)."""
        return self.degrees[0]

    @property
    def x0(self) -> Any:
        """The first tensor input's value."""
        return self.args[self.spec.tensor_positions[0]]

    @property
    def y0(self) -> Any:
        """The second tensor input's value."""
        return self.args[self.spec.tensor_positions[1]]

    def arg(self, name: str) -> Any:
        """The argument of the op named ``name``."""
        return self.args[self.spec.params.index(name)]

    @property
    def axes(self) -> tuple[int, ...]:
        """The value dims the op's ``dim`` names (all for None)."""
        return R.normalize_dims(self.arg("dim"), np.ndim(self.x0))

    def operand(self, i: int) -> Any:
        """Tensor input ``i``'s series, or its value as a constant series."""
        X = self.series[i]
        K = S.order(next(X for X in self.series if X is not None))
        return S.constant(np.asarray(self.args[self.spec.tensor_positions[i]]), K) if X is None else X

    def linear(self, series: list[Any] | None = None) -> Any:
        """The series of a linear op: ``out``, then the op's JVP rule on the K input coefficients as one batch
        of tangents (inputs without a series have none); one series per output of a multi-output op."""
        T = _jvp(self.spec, self.args, self.out, [None if X is None else X[1:] for X in series or self.series])
        if self.spec.multi_output:
            return tuple(None if t is None else _stacked(out, t) for out, t in zip(self.out, T))  # (None: indices)
        return _stacked(self.out, T)


def _stacked(out: Any, T: Any) -> Any:
    """``out`` then the coefficients ``T`` (a batch of tangents, a Tensor or an array) as one series."""
    T = T.data if isinstance(T, Tensor) else T
    return np.concatenate([out[None], np.broadcast_to(T, (len(T),) + np.shape(out))])


def degree(rule: Callable[[TaylorCall], Any], degrees: list[int | None], K: int) -> int | None:
    """The degree of a rule's result: a linear op keeps its inputs' highest, a product adds its factors'
    (at most K), anything else is not known (None)."""
    if None in degrees:
        return None
    if rule is TaylorCall.linear:
        return max(degrees)  # type: ignore[type-var]
    if rule is product:
        return min(K, sum(degrees))  # type: ignore[arg-type]
    return None


def deftaylor(name: str, rule: Callable[[TaylorCall], Any]) -> None:
    """Register the Taylor-mode rule of op ``name``."""
    spec = OPS[name]
    if spec.taylor is not None:
        raise ValueError(f"the Taylor rule of '{name}' is registered twice")
    spec.taylor = rule


def deflinear(*names: str) -> None:
    """Register ops whose result is linear in their tensor inputs (piecewise: fixed by the primal)."""
    for name in names:
        deftaylor(name, TaylorCall.linear)


def product(c: TaylorCall) -> Any:
    """A bilinear op (x * y, x @ y, ...): z_k = sum_j op(x_j, y_{k-j}); linear when a factor is constant. A third
    input (the bias of linear and convolution) is added: its series pushed through the op's JVP."""
    X, Y, *bias = c.series
    if X is None or Y is None:
        return c.linear()
    if c.spec.name == "mul":
        return S.product(X, Y)
    i, j, *others = c.spec.tensor_positions
    args = list(c.args)
    for p in others:
        args[p] = None

    def op(a: Any, b: Any) -> Any:
        args[i], args[j] = a, b
        return c.spec.kernel(*args)

    rows = [c.out]
    for k in range(1, len(X)):
        total = op(X[0], Y[k])
        for m in range(1, k + 1):
            total = total + op(X[m], Y[k - m])
        rows.append(total)
    Z = np.stack(rows)
    if any(B is not None for B in bias):
        Z[1:] += c.linear([None, None, *bias])[1:]
    return Z


def divide(c: TaylorCall) -> Any:
    """z = x / y (linear when y is constant)."""
    return c.linear() if c.y is None else S.quotient(c.x, c.y, c.out)


def power(c: TaylorCall) -> Any:
    """z = x ** y: a constant exponent by series.power, a varying one as exp(y log x)."""
    X, Y = c.series
    if Y is None:
        return S.power(X, c.y0, c.out)
    log_x = S.constant(np.log(c.x0), S.order(Y)) if X is None else S.log(X, np.log(c.x0))
    return S.exp(S.product(Y, log_x), c.out)


def times_derivative(derivative: Callable[[Any], Any]) -> Callable[[TaylorCall], Any]:
    """The rule of ``<f>_backward(grad_output, output)`` = g * conj(f'), f' = ``derivative(series of y)``: a
    product (the parameter t is real, so conj acts on each coefficient)."""
    def rule(c: TaylorCall) -> Any:
        G, Y = c.operand(0), c.operand(1)
        D = derivative(Y)
        return S.product(G, np.conj(D) if np.iscomplexobj(D) else D)
    return rule


def _result(Y: Any, out: Any) -> Any:
    """A reduction's series ``Y`` (its dims kept) in the shape of the op's result, starting at the result itself."""
    Y = Y.reshape((len(Y),) + np.shape(out))
    Y[0] = out
    return Y


def _reduced(c: TaylorCall) -> Any:
    """The op's result with the dims it reduces kept (as ``keepdim=True`` gives it)."""
    return np.reshape(c.out, R.kept_shape(np.shape(c.x0), c.arg("dim")))


def einsum(c: TaylorCall) -> Any:
    """einsum(equation, *operands): multilinear, one Cauchy product per operand with a series."""
    values = c.arg("operands")
    terms, out, spare = explicit_subscripts(c.arg("equation"), [np.shape(v) for v in values])
    return _result(S.contraction(terms, out, c.series, values, spare[0]), c.out)


def logsumexp(c: TaylorCall) -> Any:
    """y = y_0 + log T, T = sum_i w_i exp(x_i - x_i(0)) with w = exp(x_0 - y_0) (T starts at 1). A group of -inf
    (an empty one too) is a constant -inf."""
    y0 = _reduced(c)
    with np.errstate(invalid="ignore"):
        w = np.exp(c.x0 - y0)
    Y = S.log_normalized(S.summed(w * S.exp_change(c.x), c.axes), y0)
    return S.constant_where(c.out == -np.inf, _result(Y, c.out))


def centered(X: Any, axes: tuple[int, ...], softmax: Any) -> Any:
    """x - (logsumexp(x) - logsumexp(x_0)) over ``axes``, by logsumexp's rule with the weights ``softmax`` =
    softmax(x_0): the series of log_softmax(x) with the value x_0 (softmax is its exp, log_softmax it with its own
    value)."""
    T = S.summed(softmax * S.exp_change(X), axes)
    return X - S.log_normalized(T, np.zeros(T.shape[1:]))


def cross_entropy(c: TaylorCall) -> Any:
    """-sum(share * log_softmax(x)[t]) (``target_shares``: the weights, ignore_index and reduction as the op's
    rules take them): log_softmax's series along the class dim, picked at the targets."""
    safe, share, dim = target_shares(c.x0, c.arg("target"), c.arg("weight"), c.arg("ignore_index"),
                                     c.arg("reduction"))
    log_p = centered(c.x, (dim,), F.softmax(c.x0, dim))
    Y = -share * np.squeeze(np.take_along_axis(log_p, np.expand_dims(safe, dim)[None], dim + 1), dim + 1)
    if c.arg("reduction") != "none":
        Y = np.sum(Y, axis=tuple(range(1, Y.ndim)))
    return _result(Y, c.out)


def binary_cross_entropy(c: TaylorCall) -> Any:
    """The loss by its derivatives, the op's rules (torch's): l' = w ((x - t) / max(x (1 - x), 1e-12) x' - logit(x) t'),
    integrated and reduced. Where no clamp acts this is -w (t log x + (1 - t) log(1 - x)); where x (1 - x) < 1e-12 it
    follows the clamped slope, as nested reverse mode and the JVP do, not the loss's logs clamped at -100."""
    X, T = S.align(c.operand(0), c.operand(1))
    spread = S.product(X, S.shifted(-X, 1.0))
    spread = np.where(spread[0] < BCE_EPS, S.constant(np.full_like(spread[0], BCE_EPS), S.order(X)), spread)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = S.quotient(X - T, spread, (X[0] - T[0]) / spread[0])
        D = S.product(slope[:-1], S.derivative(X))
        if c.y is not None:
            logit = S.log(X, np.log(X[0])) - S.log(S.shifted(-X, 1.0), np.log1p(-X[0]))
            D = D - S.product(logit[:-1], S.derivative(T))
    if c.arg("weight") is not None:
        D = D * c.arg("weight")
    Y = S.antiderivative(D, np.zeros_like(D[0]))
    reduction, value_axes = c.arg("reduction"), tuple(range(1, Y.ndim))
    if reduction != "none":
        Y = np.mean(Y, axis=value_axes) if reduction == "mean" else np.sum(Y, axis=value_axes)
    return _result(Y, c.out)


def polar(c: TaylorCall) -> Any:
    """abs * exp(i angle) = abs (cos(angle) + i sin(angle)): a product of series."""
    A = c.operand(1)
    sine, cosine = S.sin_cos(A, np.sin(A[0]), np.cos(A[0]), degree=c.degrees[1])
    return S.product(c.operand(0), cosine + 1j * sine)


def logcumsumexp(c: TaylorCall) -> Any:
    """y_i = y_i(0) + log T_i, T_i = sum_{j <= i} exp(x_j(0) - y_i(0)) exp(x_j - x_j(0)): the op's JVP (those
    weights, summed in log space) applied to exp(x - x_0). A run of -inf is a constant -inf."""
    with np.errstate(invalid="ignore", divide="ignore"):
        Y = S.log_normalized(c.linear([S.exp_change(c.x)]), c.out)
    return S.constant_where(c.out == -np.inf, Y)


def logcumsumexp_partials(c: TaylorCall, backward: bool) -> Any:
    """logcumsumexp_backward's series (B_i = sum_{j >= i} g_j exp(x_i - o_j)), or logcumsumexp_tangent's
    (A_j = sum_{i <= j} t_i exp(x_i - o_j)): exp(x_i - o_j) = exp(x_i(0) - o_j(0)) e(x)_i e(-o)_j, e(z) = exp(z - z(0)),
    and the op at the point is linear in its first input, so it maps the product of that input's series and e of
    the summed index coefficient by coefficient; the result is then multiplied by e of the kept index."""
    G, X, O = (c.operand(i) for i in range(3))
    kept, summed = (S.exp_change(X), S.exp_change(-O)) if backward else (S.exp_change(-O), S.exp_change(X))
    return S.product(kept, c.spec.kernel(S.product(G, summed), c.arg("x"), c.arg("output"), c.arg("dim")))


def variance(c: TaylorCall) -> Any:
    """var = sum |x - mean(x)|^2 / (N - correction) over dim (inf for N <= correction, as the value)."""
    X, axes = c.x, c.axes
    n = R.count(np.shape(c.x0), c.arg("dim")) - c.arg("correction")
    centered = X - np.mean(X, axis=tuple(a + 1 for a in axes), keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _result(np.divide(S.summed(S.squared_modulus(centered), axes), n if n > 0 else 0), c.out)


def std(c: TaylorCall) -> Any:
    """std = sqrt(var); constant where std is 0 (its derivative 0 there, as torch)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return S.constant_where(c.out == 0, S.sqrt(variance(c), c.out))


def vector_norm(c: TaylorCall, p: Any) -> Any:
    """||x||_p = (sum |x_i|^p)^(1/p), |x_i|^p = (|x_i|^2)^(p/2): exact at x_i = 0 for an even p, otherwise
    constant there (|x|^p is not smooth at 0: its derivative 0, as torch); the norm constant where it is 0 (as
    torch). p = +-inf: |x_i| at the extreme, ties sharing evenly; p = 0 counts nonzeros: a constant."""
    p = 2.0 if p == "fro" else float(p)
    x0, axes = c.x0, c.axes
    if p == 0:
        return S.constant(c.out, S.order(c.x))
    if np.isinf(p):
        share = K.extreme_share(np.abs(x0), c.out, axes, R.kept_shape(np.shape(x0), c.arg("dim")))
        return _result(S.summed(S.magnitude(c.x) * share, axes), c.out)
    with np.errstate(divide="ignore", invalid="ignore"):
        P = S.power(S.squared_modulus(c.x), p / 2, np.abs(x0) ** p)
        if p % 2:
            P = S.constant_where(x0 == 0, P)
        return S.constant_where(c.out == 0, S.power(_result(S.summed(P, axes), c.out ** p), 1 / p, c.out))


def prod(c: TaylorCall) -> Any:
    """prod x over dim, by products (right at zeros)."""
    return _result(S.product_over(c.x, c.axes), c.out)


def cumprod(c: TaylorCall) -> Any:
    """Running products along dim, by products (right at zeros); a 0-d x is itself."""
    axes = c.axes
    return S.cumulative_product(c.x, axes[0]) if axes else c.x


def log_add_exp(c: TaylorCall, scale: float) -> Any:
    """logaddexp (``scale`` 1) and logaddexp2 (ln 2): z s = log(exp(x s) + exp(y s)) = z_0 s + log T, T the sum of
    exp(x_0 s - z_0 s) exp((x - x_0) s) and y's term (T starts at 1); two -inf are a constant -inf."""
    out = c.out * scale
    with np.errstate(invalid="ignore"):
        T = sum(np.exp(v * scale - out) * S.expanded(S.exp_change(X * scale), np.ndim(out))
                for X, v in zip(c.series, (c.x0, c.y0)) if X is not None)
    return S.constant_where(c.out == -np.inf, S.log_normalized(T, out) / scale)


def xlogy(c: TaylorCall) -> Any:
    """x log y: linear in x for a constant y (so torch's 0 where x = 0 and y <= 0), else a product."""
    if c.y is None:
        return c.linear()
    with np.errstate(divide="ignore", invalid="ignore"):
        Z = S.product(c.operand(0), S.log(c.y, np.log(c.y0)))
    Z[0] = c.out
    return Z


def hypot(c: TaylorCall) -> Any:
    """sqrt(x^2 + y^2) (NaN at (0, 0), as torch)."""
    X, Y = S.align(c.operand(0), c.operand(1))
    return S.sqrt(S.squared_modulus(X) + S.squared_modulus(Y), c.out)


def sinc(c: TaylorCall) -> Any:
    """sinc(x) = sin(pi x) / (pi x): the quotient's series, which cancels as x_0 nears 0 (order 3 at x_0 = 1e-5 was off
    in sign); for |x_0| < 1/2 sinc's own power series re-expanded at x_0 (``_sinc_coefficients``)."""
    X = c.x * math.pi
    with np.errstate(divide="ignore", invalid="ignore"):
        Z = S.quotient(S.sin_cos(X, np.sin(X[0]), np.cos(X[0]), degree=c.dx)[0], X, c.out)
    near = np.abs(c.x0) < 0.5
    if not np.any(near):
        return Z
    return np.where(near, S.composed(_sinc_coefficients(np.where(near, c.x0, 0.0), S.order(X)), c.x, c.dx), Z)


def _sinc_coefficients(x0: Any, K: int) -> Any:
    """sinc's Taylor coefficients at x_0 (|x_0| < 1/2), sinc^(n)(x_0) / n! for n <= K: from sinc(x) = sum_m a_m x^(2m),
    a_m = (-1)^m pi^(2m) / (2m + 1)!, each x^(2m) expanded at x_0 (20 terms past K's: below float64's rounding)."""
    def a(m: int) -> float:
        return (-1) ** m * math.pi ** (2 * m) / math.factorial(2 * m + 1)
    return np.stack([sum(a(m) * math.comb(2 * m, n) * x0 ** (2 * m - n) for m in range((n + 1) // 2, K // 2 + 20))
                     for n in range(K + 1)])


def cbrt(c: TaylorCall) -> Any:
    """x^(1/3) by series.power; constant where x is constantly 0. A curve through 0 has no Taylor series there (it
    starts at t^(1/3)): NoTaylorRule, as JAX's jet has no cbrt rule (nested reverse mode gives JAX's inf, -inf, inf)."""
    at_zero = c.x0 == 0
    if np.any(at_zero & np.any(c.x[1:] != 0, axis=0)):
        raise NoTaylorRule("jet: cbrt at 0 has no Taylor expansion (x^(1/3) along a curve through 0 starts at "
                           "t^(1/3)); use nested reverse mode (nth_derivative and directional_derivative fall "
                           "back to it)")
    return S.constant_where(at_zero, S.power(c.x, 1 / 3, c.out))


def polygamma(c: TaylorCall, m: int) -> Any:
    """psi^(m)(x) (lgamma: m = -1, digamma: m = 0): its Taylor coefficients at x_0, psi^(m + n)(x_0) / n!, composed
    with x's series."""
    F = np.stack([c.out] + [sp.polygamma(m + n, c.x0) / math.factorial(n) for n in range(1, S.order(c.x) + 1)])
    return S.composed(F, c.x, c.dx)


def solve(c: TaylorCall) -> Any:
    """X = A^{-1} B: linear in B for a constant A, else A X = B solved with A_0 coefficient by coefficient (a vector
    B as a column)."""
    A, B = c.series
    if A is None:
        return c.linear()
    vector = _is_vector_rhs(np.shape(c.x0), np.shape(c.y0))

    def as_matrix(Z: Any) -> Any:
        return Z[..., None] if vector else Z
    X = S.left_quotient(A, None if B is None else as_matrix(B), as_matrix(c.out),
                        lambda rhs: np.linalg.solve(c.x0, rhs))
    return X[..., 0] if vector else X


def log_det_change(c: TaylorCall) -> Any:
    """log det A - log det A_0, by the series of A^{-1}; NoTaylorRule at a singular A_0 (nested reverse mode takes
    det's derivatives there)."""
    try:
        inverse = np.linalg.inv(c.x0)
    except np.linalg.LinAlgError:
        raise NoTaylorRule(f"jet: '{c.spec.name}' has no Taylor expansion here: the matrix is singular") from None
    return S.log_det_change(c.x, S.left_quotient(c.x, None, inverse, lambda rhs: inverse @ rhs))


def slogdet(c: TaylorCall) -> Any:
    """(sign, log|det A|) with L = log det A - log det A_0: log|det A| changes by Re L, the sign by the factor
    exp(i Im L) (constant for a real A)."""
    sign, logabsdet = c.out
    L = log_det_change(c)
    return S.exp(L - np.real(L), sign), S.shifted(np.real(L), logabsdet)


# ----- linear and piecewise-linear ops ------------------------------------------------------------------
deflinear("add", "sub", "neg", "clone", "alias", "to_copy", "remainder",
          "sum", "sum_to", "mean", "cumsum", "trace",
          "reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze", "expand", "broadcast_to",
          "permute", "transpose", "movedim", "diagonal", "diag", "triu", "tril", "repeat", "flip", "roll",
          "getitem", "index_put", "narrow", "select", "gather", "index_select", "take_along_dim",
          "scatter", "scatter_add", "masked_fill", "pad", "cat", "stack", "where",
          "split", "unbind", "fill", "copy", "copy_slices", "view_region",
          "real", "imag", "conj_physical", "view_as_real", "view_as_complex",  # linear over the reals (t is real)
          "relu", "maximum", "minimum", "clamp", "amax", "amin", "fmax", "fmin",   # the branch the primal takes
          "max_pool", "avg_pool", "adaptive_avg_pool",                        # windows fixed by the primal
          "max_unpool",                                                       # positions fixed by the indices
          "copysign",                                                         # +-x, the sign fixed by the primal
          "fmod", "frac",                                                     # x - n y, n fixed by the primal
          "sign", "floor", "ceil", "round", "trunc")                          # zero series

# ----- products -------------------------------------------------------------------------------------------
for _name in ("mul", "matmul", "mm", "bmm", "dot", "vdot", "outer", "tensordot",
              "linear", "convolution", "convolution_transpose", "convolution_weight"):
    deftaylor(_name, product)
deftaylor("einsum",     einsum)
deftaylor("div",        divide)
deftaylor("abs",        lambda c: S.modulus(c.x, c.out) if np.iscomplexobj(c.x) else c.linear())  # real: its branch
deftaylor("pow",        power)
deftaylor("square",     lambda c: S.square(c.x))
deftaylor("reciprocal", lambda c: S.quotient(None, c.x, c.out))

# ----- exponentials and logarithms ---------------------------------------------------------------------
deftaylor("exp",   lambda c: S.exp(c.x, c.out, c.dx))
deftaylor("exp2",  lambda c: S.exp(S.scaled(c.x, LN2), c.out))
deftaylor("expm1", lambda c: S.expm1(c.x, c.out, c.dx))
deftaylor("log",   lambda c: S.log(c.x, c.out))
deftaylor("log2",  lambda c: S.scaled(S.log(c.x, np.log(c.x0)), 1 / LN2))
deftaylor("log10", lambda c: S.scaled(S.log(c.x, np.log(c.x0)), 1 / LN10))
deftaylor("log1p", lambda c: S.log(S.shifted(c.x, 1.0), c.out))
deftaylor("xlogy", xlogy)
deftaylor("logaddexp",  lambda c: log_add_exp(c, 1.0))
deftaylor("logaddexp2", lambda c: log_add_exp(c, LN2))
deftaylor("sqrt",  lambda c: S.sqrt(c.x, c.out))
deftaylor("rsqrt", lambda c: S.power(c.x, -0.5, c.out))
deftaylor("cbrt",  cbrt)

# ----- trigonometric and hyperbolic ---------------------------------------------------------------------
deftaylor("sin",   lambda c: S.sin_cos(c.x, c.out, np.cos(c.x0), degree=c.dx)[0])
deftaylor("cos",   lambda c: S.sin_cos(c.x, np.sin(c.x0), c.out, degree=c.dx)[1])
deftaylor("tan",   lambda c: S.tan(c.x, c.out, c.dx))
deftaylor("sinh",  lambda c: S.sin_cos(c.x, c.out, np.cosh(c.x0), True, c.dx)[0])
deftaylor("cosh",  lambda c: S.sin_cos(c.x, np.sinh(c.x0), c.out, True, c.dx)[1])
deftaylor("tanh",  lambda c: S.tanh(c.x, c.out, c.dx))
deftaylor("tanh_backward", times_derivative(lambda Y: S.shifted(-S.square(Y), 1.0)))   # 1 - y^2
deftaylor("asin",  lambda c: S.arc(c.x, c.out, 1.0, -1.0, -0.5))
deftaylor("acos",  lambda c: S.arc(c.x, c.out, 1.0, -1.0, -0.5, sign=-1.0))
deftaylor("atan",  lambda c: S.arc(c.x, c.out, 1.0, 1.0, -1.0))
deftaylor("asinh", lambda c: S.arc(c.x, c.out, 1.0, 1.0, -0.5))
deftaylor("acosh", lambda c: S.arc(c.x, c.out, -1.0, 1.0, -0.5))
deftaylor("atanh", lambda c: S.arc(c.x, c.out, 1.0, -1.0, -1.0))
deftaylor("atan2", lambda c: S.atan2(c.operand(0), c.operand(1), c.out))
deftaylor("hypot", hypot)

# ----- complex numbers (real inputs: piecewise constant, as their derivative 0) --------------------------------
deftaylor("angle", lambda c: S.atan2(np.imag(c.x), np.real(c.x), c.out) if np.iscomplexobj(c.x) else
          S.constant(c.out, S.order(c.x)))
deftaylor("sgn",   lambda c: S.unit(c.x, c.out) if np.iscomplexobj(c.x) else S.constant(c.out, S.order(c.x)))
deftaylor("polar", polar)

# ----- activations and special functions ------------------------------------------------------------------
deftaylor("sigmoid", lambda c: S.sigmoid(c.x, c.out, c.dx))
deftaylor("sigmoid_backward", times_derivative(lambda Y: Y - S.square(Y)))
deftaylor("erf",     lambda c: S.erf(c.x, c.out))
deftaylor("erfc",    lambda c: S.erf(c.x, c.out, sign=-1.0))
deftaylor("erfinv",    lambda c: S.erfinv(c.x, c.out, c.dx))
deftaylor("sinc",      sinc)
deftaylor("lgamma",    lambda c: polygamma(c, -1))
deftaylor("digamma",   lambda c: polygamma(c, 0))
deftaylor("polygamma", lambda c: polygamma(c, c.arg("n")))

# ----- reductions, scans and normalizations ------------------------------------------------------------
deftaylor("var",          variance)
deftaylor("std",          std)
deftaylor("norm",         lambda c: vector_norm(c, c.arg("p")))
deftaylor("linalg_vector_norm", lambda c: vector_norm(c, c.arg("ord")))
deftaylor("prod",         prod)
deftaylor("cumprod",      cumprod)
deftaylor("logsumexp",    logsumexp)
deftaylor("logcumsumexp", logcumsumexp)
deftaylor("logcumsumexp_backward", lambda c: logcumsumexp_partials(c, backward=True))
deftaylor("logcumsumexp_tangent",  lambda c: logcumsumexp_partials(c, backward=False))
deftaylor("softmax",      lambda c: S.exp(centered(c.x, c.axes, c.out), c.out))
deftaylor("log_softmax",  lambda c: _result(centered(c.x, c.axes, np.exp(c.out)), c.out))
deftaylor("cross_entropy",        cross_entropy)
deftaylor("binary_cross_entropy", binary_cross_entropy)

# ----- linear algebra (matrices in the value's last two dims, batches broadcasting) ---------------------------------
deftaylor("linalg_inv",      lambda c: S.left_quotient(c.x, None, c.out, lambda rhs: c.out @ rhs))
deftaylor("linalg_solve",    solve)
deftaylor("linalg_cholesky", lambda c: S.factor(c.x, c.out, lambda M: cholesky_jvp(M, c.out)))
deftaylor("linalg_det",      lambda c: S.exp(log_det_change(c), c.out))
deftaylor("linalg_slogdet",  slogdet)
deftaylor("linalg_eigh",     lambda c: S.eigen(_hermitian_from_lower(c.x), *c.out))
deftaylor("linalg_eigvalsh", lambda c: S.eigen(_hermitian_from_lower(c.x), *np.linalg.eigh(c.x0, UPLO="L"))[0])
