"""Truncated Taylor series arithmetic: the recurrences the Taylor-mode rules (``taylor.py``) are made of.

A series is a stacked array ``X`` of shape ``(K + 1, *shape)`` holding the normalized coefficients of
x(t) = x_0 + x_1 t + ... + x_K t^K, that is x_k = x^(k)(0) / k!; ``X[0]`` is the primal value. Each
function returns its result's series to the same order K, each coefficient from the lower ones by
the standard recurrences (Griewank & Walther, *Evaluating Derivatives*, ch. 13): O(K^2) work per op,
each inner sum over j one product of stacked arrays. A result is filled coefficient by coefficient
into an array from ``np.empty_like`` of an input, so under ``func.jit`` (whose traced arrays record
slicing, ufuncs and item assignment) all of it is recorded.

Most rules of smooth functions are ``integral``/``ode``: y' = d * x' with d = f'(x) known as a
series (erf, atan, ...) or built from y as it is computed (exp: d = y; tanh: d = 1 - y^2).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

Series = Any  # a stacked array (K + 1, *shape), or a traced one under jit


def order(X: Series) -> int:
    """K, the highest coefficient of ``X``."""
    return len(X) - 1


def constant(value: Any, K: int) -> Series:
    """The series of a constant: ``value`` (an array) then K zero coefficients."""
    return np.stack([value] + [np.zeros_like(value)] * K)


def _new(*like: Series, shape: tuple[int, ...], value: Any = None) -> Series:
    """An uninitialized series of ``shape``, traced (recorded by ``jit``) when one of ``like`` is, of the type of
    ``like`` and ``value`` together (a real series times a complex one is complex)."""
    proto = next((a for a in like if type(a) is not np.ndarray), like[0])
    dtype = proto.dtype
    if value is not None or len(like) > 1:
        others = [a.dtype for a in like] + ([] if value is None else [getattr(value, "dtype", value)])
        dtype = np.result_type(*others)
    return np.empty_like(proto, dtype=dtype, shape=shape)


def _dot(A: Series, B: Series) -> Any:
    """sum_j A[j] * B[j] over the order axis (einsum: one pass, no (j, *shape) temporary)."""
    return A[0] * B[0] if len(A) == 1 else np.einsum("j...,j...->...", A, B)


def _ramp(start: int, stop: int, ndim: int) -> np.ndarray:
    """start, ..., stop - 1 along the first of ``ndim`` dims (to scale stacked coefficients)."""
    return np.arange(start, stop, dtype=np.float64).reshape((-1,) + (1,) * (ndim - 1))


def derivative(X: Series) -> Series:
    """x'(t) to order K - 1: its coefficients (k + 1) x_{k+1}, that is j x_j for j = 1..K."""
    return X[1:] * _ramp(1, len(X), X.ndim)


def antiderivative(D: Series, y0: Any) -> Series:
    """y with y' = d and y(0) = y0, to order K + 1 for a ``D`` of order K: y_k = d_{k-1} / k."""
    return np.concatenate([np.asarray(y0, D.dtype)[None], D / _ramp(1, len(D) + 1, D.ndim)])


def expanded(X: Series, ndim: int) -> Series:
    """``X`` with its value padded with leading dims of size 1 to ``ndim`` dims (to broadcast as values do)."""
    return X.reshape(X.shape[:1] + (1,) * (ndim + 1 - X.ndim) + X.shape[1:])


def align(X: Series, Y: Series) -> tuple[Series, Series]:
    """Two series whose value shapes broadcast, given the same number of dims after the order axis."""
    ndim = max(X.ndim, Y.ndim) - 1
    return expanded(X, ndim), expanded(Y, ndim)


def product(X: Series, Y: Series) -> Series:
    """z = x * y: z_k = sum_{j=0}^{k} x_j y_{k-j} (the Cauchy product)."""
    X, Y = align(X, Y)
    Z = _new(X, Y, shape=X.shape[:1] + np.broadcast_shapes(X.shape[1:], Y.shape[1:]))
    for k in range(len(X)):
        Z[k] = _dot(X[: k + 1], Y[k::-1])
    return Z


def square(X: Series) -> Series:
    """z = x^2."""
    return product(X, X)


def _terms(k: int, degree: int | None) -> int:
    """How many j = 1..k can have x_j != 0 when x's coefficients above ``degree`` are known to be zero."""
    return k if degree is None else min(k, degree)


def _recent(D: Series, k: int, m: int) -> Series:
    """d_{k-1}, d_{k-2}, ..., d_{k-m}."""
    return D[k - 1::-1] if m == k else D[k - 1:k - 1 - m:-1]


def _convolve(JX: Series, D: Series, k: int, degree: int | None) -> Any:
    """sum_{j=1}^{k} j x_j d_{k-j} (``JX`` holds j x_j from j = 1), skipping the x_j known to be zero."""
    m = _terms(k, degree)
    return JX[0] * D[k - 1] if m == 1 else np.einsum("j...,j...->...", JX[:m], _recent(D, k, m))


def _chain(X: Series, degree: int | None) -> Callable[[Series, int], Any]:
    """The k-th coefficient of y for y' = d x', from d's lower ones: ``(D, k) -> (1/k) sum_{j=1}^{k} j x_j d_{k-j}``.
    ``degree``: x_j = 0 for j > degree, so those terms are skipped; a line (degree 1) gives (x_1 / k) d_{k-1},
    one product per coefficient with the x_1 / k computed at once."""
    if degree == 1:
        W = X[1] / _ramp(1, len(X), X.ndim)
        return lambda D, k: W[k - 1] * D[k - 1]
    JX = derivative(X)
    return lambda D, k: _convolve(JX, D, k, degree) / k


def ode(X: Series, Y: Series, D: Series, next_d: Callable[[int], Any] | None, degree: int | None = None) -> Series:
    """Fill ``Y`` (``Y[0]`` given) for y' = d x': y_k = (1/k) sum_{j=1}^{k} j x_j d_{k-j}, where ``D[0]`` is
    given and d_k = ``next_d(k)`` once y_0..y_k are known (``next_d`` None: ``D`` is ``Y`` itself, as for exp).
    ``degree``: x_j = 0 for j > degree (a line x_0 + x_1 t has degree 1), so those terms are skipped."""
    term = _chain(X, degree)
    K = len(X) - 1
    for k in range(1, K + 1):
        Y[k] = term(D, k)
        if next_d is not None and k < K:
            D[k] = next_d(k)
    return Y


def _started(X: Series, *values: Any) -> list[Series]:
    """New series shaped like ``X``, one per value, each with its value as coefficient 0."""
    out = []
    for v in values:
        Y = _new(X, shape=X.shape, value=v)
        Y[0] = v
        out.append(Y)
    return out


def integral(X: Series, y0: Any, D: Series) -> Series:
    """y with y' = d x' for a known series d (d = f'(x), x the input), y(0) = y0."""
    (Y,) = _started(X, y0)
    return ode(X, Y, D, None)


# ----- exponentials and logarithms ------------------------------------------------------------------
def exp(X: Series, y0: Any, degree: int | None = None) -> Series:
    """y = exp(x): y' = y x'."""
    (Y,) = _started(X, y0)
    return ode(X, Y, Y, None, degree)


def expm1(X: Series, y0: Any, degree: int | None = None) -> Series:
    """y = exp(x) - 1: y' = (y + 1) x', so d = exp(x) shares y's coefficients from k = 1 on."""
    Y, D = _started(X, y0, y0 + 1)
    return ode(X, Y, D, lambda k: Y[k], degree)


def log(X: Series, y0: Any) -> Series:
    """y = log(x): x y' = x', so y_k = (x_k - (1/k) sum_{j=1}^{k-1} j y_j x_{k-j}) / x_0."""
    (Y,) = _started(X, y0)
    for k in range(1, len(X)):
        inner = _dot(Y[1:k] * _ramp(1, k, X.ndim), X[k - 1:0:-1]) / k if k > 1 else 0
        Y[k] = (X[k] - inner) / X[0]
    return Y


def exp_change(X: Series) -> Series:
    """exp(x - x_0), which starts at 1 (exp's recurrence never reads x_0, so an infinite x_0 is fine)."""
    return exp(X, np.ones_like(X[0]))


def log_normalized(T: Series, y0: Any) -> Series:
    """y = y0 + log T for a T that starts at 1 (its T_0 is taken as exactly 1, whatever rounding gave), broadcast
    to y0's shape: logsumexp and its kin, whose T is a weighted sum of ``exp_change`` series."""
    T = np.broadcast_to(expanded(T, np.ndim(y0)), T.shape[:1] + np.shape(y0))
    return log(np.concatenate([np.ones_like(T[:1]), T[1:]]), y0)


def constant_where(mask: Any, Y: Series) -> Series:
    """``Y`` where ``mask`` is False, the constant ``Y[0]`` where it is True (a choice at a kink, as torch)."""
    return np.where(mask, constant(Y[0], order(Y)), Y)


def shifted(X: Series, c: Any) -> Series:
    """x + c for a constant c (only x_0 changes)."""
    return np.concatenate([X[:1] + c, X[1:]])


def scaled(X: Series, c: Any) -> Series:
    """c * x for a constant c."""
    return X * c


# ----- powers and quotients -------------------------------------------------------------------------
def quotient(X: Series | None, Y: Series, z0: Any) -> Series:
    """z = x / y: y z = x, so z_k = (x_k - sum_{j=0}^{k-1} z_j y_{k-j}) / y_0 (x = None: a constant x)."""
    if X is not None:
        X, Y = align(X, Y)
    Z = _new(Y, *(() if X is None else (X,)), value=z0,
             shape=Y.shape[:1] + (np.shape(z0) if X is None else np.broadcast_shapes(X.shape[1:], Y.shape[1:])))
    Z[0] = z0
    for k in range(1, len(Y)):
        s = _dot(Y[k:0:-1], Z[:k])
        Z[k] = ((X[k] - s) if X is not None else -s) / Y[0]
    return Z


def sqrt(X: Series, y0: Any) -> Series:
    """y = sqrt(x): y^2 = x, so y_k = (x_k - sum_{j=1}^{k-1} y_j y_{k-j}) / (2 y_0)."""
    (Y,) = _started(X, y0)
    for k in range(1, len(X)):
        inner = _dot(Y[1:k], Y[k - 1:0:-1]) if k > 1 else 0
        Y[k] = (X[k] - inner) / (2 * y0)
    return Y


def squared_modulus(X: Series) -> Series:
    """|x|^2: x^2 for a real x; (Re x)^2 + (Im x)^2 for a complex x (the curve's parameter is real, so Re x and
    Im x have the real and imaginary parts of x's coefficients)."""
    if not np.iscomplexobj(X):
        return square(X)
    R, I = np.real(X), np.imag(X)
    return product(R, R) + product(I, I)


def modulus(X: Series, y0: Any) -> Series:
    """y = |x| for a complex x: y^2 = (Re x)^2 + (Im x)^2."""
    return sqrt(squared_modulus(X), y0)


def unit(X: Series, y0: Any) -> Series:
    """y = x / |x| for a complex x; constant where x_0 = 0 (its derivative 0 there, as torch's sgn)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return constant_where(X[0] == 0, quotient(X, modulus(X, np.abs(X[0])), y0))


def power(X: Series, r: Any, y0: Any) -> Series:
    """y = x^r for a constant r. A natural r multiplies (exact at x_0 = 0), r = 0 is the constant 1; otherwise
    x y' = r y x' gives y_k = (1 / (k x_0)) sum_{j=1}^{k} ((r + 1) j - k) x_j y_{k-j}."""
    if np.ndim(r) == 0 and float(r).is_integer() and r >= 0:
        return natural_power(X, int(r)) if r else constant(y0, order(X))
    Y = _new(X, shape=X.shape[:1] + np.shape(y0), value=y0)
    Y[0] = y0
    with np.errstate(divide="ignore", invalid="ignore"):  # x_0 = 0: redone below
        for k in range(1, len(X)):
            Y[k] = _dot(X[1: k + 1] * ((r + 1) * _ramp(1, k + 1, X.ndim) - k), Y[k - 1::-1]) / (k * X[0])
    # x_0 = 0: x^r starts at t^r, so its coefficients below order r are 0 (those above do not exist)
    Y = np.where((X[0] == 0) & (_ramp(0, len(X), X.ndim) < r), 0.0, Y)
    natural = (np.round(r) == r) & (r >= 0)
    if np.ndim(r) and natural.any():  # an array of exponents: its natural ones by products, exact at x_0 = 0
        return np.where(natural, natural_powers(X, np.where(natural, r, 0).astype(np.int64), y0), Y)
    return Y


def natural_powers(X: Series, r: np.ndarray, y0: Any) -> Series:
    """y = x^r for an array of naturals r (broadcasting against x; y0 = x_0^r): repeated squaring, each product
    taken where the element's bit of r is set."""
    Y = constant(np.ones_like(y0), order(X))
    bits = int(r.max()).bit_length()
    for b in range(bits):
        Y = np.where((r >> b) & 1, product(Y, X), Y)
        if b < bits - 1:
            X = product(X, X)
    return Y


def natural_power(X: Series, r: int) -> Series:
    """y = x^r for a natural r >= 1, by repeated squaring: about 2 log2(r) products."""
    result = None
    while True:
        if r & 1:
            result = X if result is None else product(result, X)
        r >>= 1
        if not r:
            return result
        X = product(X, X)


# ----- trigonometric and hyperbolic -------------------------------------------------------------------
def sin_cos(X: Series, s0: Any, c0: Any, hyperbolic: bool = False,
            degree: int | None = None) -> tuple[Series, Series]:
    """s = sin(x), c = cos(x): s' = c x', c' = -s x' (sinh, cosh: c' = +s x')."""
    term = _chain(X, degree)
    Sn, Cs = _started(X, s0, c0)
    for k in range(1, len(X)):
        Sn[k] = term(Cs, k)
        c = term(Sn, k)
        Cs[k] = c if hyperbolic else -c
    return Sn, Cs


def tanh(X: Series, y0: Any, degree: int | None = None) -> Series:
    """y = tanh(x): y' = (1 - y^2) x'."""
    Y, D = _started(X, y0, 1 - y0 * y0)
    return ode(X, Y, D, lambda k: -_dot(Y[: k + 1], Y[k::-1]), degree)


def tan(X: Series, y0: Any, degree: int | None = None) -> Series:
    """y = tan(x): y' = (1 + y^2) x'."""
    Y, D = _started(X, y0, 1 + y0 * y0)
    return ode(X, Y, D, lambda k: _dot(Y[: k + 1], Y[k::-1]), degree)


def sigmoid(X: Series, y0: Any, degree: int | None = None) -> Series:
    """y = sigmoid(x): y' = (y - y^2) x'."""
    Y, D = _started(X, y0, y0 - y0 * y0)
    return ode(X, Y, D, lambda k: Y[k] - _dot(Y[: k + 1], Y[k::-1]), degree)


def arc(X: Series, y0: Any, c: float, s: float, r: float, sign: float = 1.0) -> Series:
    """y with y' = sign * (c + s x^2)^r x': asin (1, -1, -1/2), acos (the same, sign -1), atan (1, 1, -1),
    asinh (1, 1, -1/2), acosh (-1, 1, -1/2), atanh (1, -1, -1)."""
    inner = shifted(scaled(square(X), s), c)
    return integral(X, y0, scaled(power(inner, r, inner[0] ** r), sign))


def atan2(X: Series, Y: Series, z0: Any) -> Series:
    """z = atan2(x, y): z' = (y x' - x y') / (x^2 + y^2); constant where x_0 = y_0 = 0 (its derivative 0 there,
    as torch)."""
    X, Y = align(X, Y)
    numerator = product(Y[:-1], derivative(X)) - product(X[:-1], derivative(Y))
    squares = squared_modulus(X) + squared_modulus(Y)
    with np.errstate(divide="ignore", invalid="ignore"):
        Z = antiderivative(quotient(numerator, squares[:-1], numerator[0] / squares[0]), z0)
    return constant_where((X[0] == 0) & (Y[0] == 0), Z)


# ----- special functions ----------------------------------------------------------------------------
def erf(X: Series, y0: Any, sign: float = 1.0) -> Series:
    """y = erf(x): y' = (2 / sqrt(pi)) exp(-x^2) x' (erfc: the negative)."""
    E = scaled(square(X), -1.0)
    D = exp(E, np.exp(E[0])) * (sign * 2.0 / math.sqrt(math.pi))
    return integral(X, y0, D)


def erfinv(X: Series, y0: Any, degree: int | None = None) -> Series:
    """y = erfinv(x): y' = (sqrt(pi) / 2) exp(y^2) x', the coefficients of q = y^2 and e = exp(q) (e' = e q')
    each computed once y's are known: O(K^2)."""
    c = math.sqrt(math.pi) / 2
    Y, Q, E = _started(X, y0, y0 * y0, np.exp(y0 * y0))
    D = E * c

    def next_d(k: int) -> Any:
        Q[k] = _dot(Y[: k + 1], Y[k::-1])
        E[k] = _dot(Q[1: k + 1] * _ramp(1, k + 1, X.ndim), E[k - 1::-1]) / k
        return c * E[k]
    return ode(X, Y, D, next_d, degree)


def composed(F: Series, X: Series, degree: int | None = None) -> Series:
    """y = f(x) for an f known by its Taylor coefficients at x_0 (``F[n]`` = f^(n)(x_0) / n!, shaped as ``X``):
    y = sum_n F_n (x - x_0)^n, whose powers start at t^n. A line (``degree`` 1) gives y_k = F_k x_1^k, O(K); any
    other curve K products, O(K^3) (lgamma and its kin satisfy no short ODE)."""
    if degree == 1:
        return F * X[1] ** _ramp(0, len(X), X.ndim)
    change = np.concatenate([np.zeros_like(X[:1]), X[1:]])
    Y, power_ = constant(F[0], order(X)), change
    for n in range(1, len(X)):
        Y = Y + F[n] * power_
        if n < order(X):
            power_ = product(power_, change)
    return Y


# ----- reductions and scans (``axes`` are the value's: the series' are one more) --------------------------
def summed(X: Series, axes: tuple[int, ...]) -> Series:
    """sum x over ``axes``, kept."""
    return np.sum(X, axis=tuple(a + 1 for a in axes), keepdims=True)


def magnitude(X: Series) -> Series:
    """|x|: sign(x_0) x for a real x, ``modulus`` for a complex one; |x| is constant where x_0 = 0 (the derivative
    0 there, as torch's sgn(0) = 0)."""
    x0 = X[0]
    if not np.iscomplexobj(X):
        return X * np.sign(x0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return constant_where(x0 == 0, modulus(X, np.abs(x0)))


def _last(X: Series, axes: tuple[int, ...]) -> Series:
    """``X`` with the value ``axes`` merged into one last dim."""
    moved = np.moveaxis(X, [a + 1 for a in axes], range(X.ndim - len(axes), X.ndim))
    return moved.reshape(moved.shape[: X.ndim - len(axes)] + (-1,))


def product_over(X: Series, axes: tuple[int, ...]) -> Series:
    """prod x over ``axes`` (kept): pairs multiplied, halving the group each round, log2(n) rounds of O(K^2)
    products; no division, so zeros are right."""
    P = _last(X, axes)
    if not P.shape[-1]:
        P = np.ones_like(P, shape=P.shape[:-1] + (1,))
        P[1:] = 0
    while P.shape[-1] > 1:
        half = P.shape[-1] // 2
        P = np.concatenate([product(P[..., :half], P[..., half: 2 * half]), P[..., 2 * half:]], axis=-1)
    return P.reshape(tuple(1 if a - 1 in axes else n for a, n in enumerate(X.shape)))


def cumulative_product(X: Series, axis: int) -> Series:
    """prod_{j <= i} x_j along ``axis``: each round multiplies in the running product from ``s`` places back
    (s = 1, 2, 4, ...), log2(n) rounds of O(K^2) products, no division."""
    P = np.moveaxis(X, axis + 1, -1)
    s = 1
    while s < P.shape[-1]:
        P = np.concatenate([P[..., :s], product(P[..., s:], P[..., :-s])], axis=-1)
        s *= 2
    return np.moveaxis(P, -1, axis + 1)


def contraction(terms: list[str], out: str, X: list[Series | None], values: list[Any], letter: str) -> Series:
    """einsum(",".join(terms) + "->" + out) of the operands' series (None: constant ``values[i]``), one operand at
    a time: the running result keeps the letters still needed; a series times a constant is one einsum over the
    order axis (named ``letter``), a series times a series their Cauchy product, one einsum per coefficient that
    sums over the order axis."""
    o = letter
    Z: Series = X[0]
    held, value = terms[0], values[0]
    for i in range(1, len(terms)):
        later = set(out).union(*terms[i + 1:])
        kept = "".join(dict.fromkeys(c for c in held + terms[i] if c in later))
        B, term = X[i], terms[i]
        if B is None:
            Z = None if Z is None else np.einsum(f"{o}{held},{term}->{o}{kept}", Z, values[i], optimize=True)
        elif Z is None:
            Z = np.einsum(f"{held},{o}{term}->{o}{kept}", value, B, optimize=True)
        else:
            Z = np.stack([np.einsum(f"{o}{held},{o}{term}->{kept}", Z[: k + 1], B[k::-1], optimize=True)
                          for k in range(len(Z))])
        value = np.einsum(f"{held},{term}->{kept}", value, values[i], optimize=True)
        held = kept
    return np.einsum(f"{o}{held}->{o}{out}", Z)


# ----- matrices (the value's last two dims; batch dims broadcast) --------------------------------------------
def _matrix_dot(A: Series, B: Series) -> Any:
    """sum_j A[j] @ B[j] over the order axis (0 for none)."""
    return np.einsum("j...ab,j...bc->...ac", A, B)


def left_quotient(A: Series, B: Series | None, x0: Any, divide: Callable[[Any], Any]) -> Series:
    """x = a^{-1} b for matrices: a x = b, so x_k = a_0^{-1} (b_k - sum_{j=1}^{k} a_j x_{k-j}), ``divide`` applying
    a_0^{-1} to a (stack of) right-hand side(s); b None: a constant b (a^{-1} itself is a^{-1} I)."""
    X = _new(A, *(() if B is None else (B,)), shape=A.shape[:1] + np.shape(x0), value=x0)
    X[0] = x0
    for k in range(1, len(A)):
        s = _matrix_dot(A[1: k + 1], X[k - 1::-1])
        X[k] = divide(-s if B is None else B[k] - s)
    return X


def factor(A: Series, l0: Any, tangent: Callable[[Any], Any]) -> Series:
    """l l^H = a for matrices (Cholesky): a_k = sum_{j=0}^{k} l_j l_{k-j}^H, so l_k = tangent(a_k - sum_{j=1}^{k-1}
    l_j l_{k-j}^H), ``tangent`` the factorization's derivative at l_0 (the linear map da -> dl)."""
    L = _new(A, shape=A.shape[:1] + np.shape(l0), value=l0)
    L[0] = l0
    for k in range(1, len(A)):
        L[k] = tangent(A[k] - np.einsum("j...ab,j...cb->...ac", L[1:k], np.conj(L[k - 1:0:-1])))
    return L


def trace_product(X: Series, Y: Series) -> Series:
    """z = tr(x y) for matrices: z_k = sum_{j=0}^{k} tr(x_j y_{k-j})."""
    return np.stack([np.einsum("j...ab,j...ba->...", X[: k + 1], Y[k::-1]) for k in range(len(X))])


def log_det_change(A: Series, inverse: Series) -> Series:
    """log det a - log det a_0 (``inverse`` the series of a^{-1}): its derivative is tr(a^{-1} a')."""
    D = trace_product(inverse[:-1], derivative(A))
    return antiderivative(D, np.zeros_like(D[0]))


def eigen(A: Series, w0: Any, v0: Any) -> tuple[Series, Series]:
    """a v = v diag(w), v^H v = I for Hermitian matrices a (distinct eigenvalues w_0). With v_k = v_0 c_k, order k
    of a v = v diag(w) gives w_k = diag(r_k) and (c_k)_il = (r_k)_il / (w_0l - w_0i) off the diagonal, where
    r_k = v_0^H (sum_{j=1}^{k} a_j v_{k-j} - sum_{j=1}^{k-1} v_j diag(w_{k-j})); the diagonal, diag(c_k) =
    -(1/k) diag(sum_{j=1}^{k-1} (k - j) c_j^H c_{k-j}), keeps v^H v = I (its real part) and v^H v' free of a
    diagonal (its imaginary part: the phases the JVP rule's dv = v (P o E) follows)."""
    n = np.shape(w0)[-1]
    eye = np.eye(n, dtype=bool)
    gaps = w0[..., None, :] - w0[..., :, None]
    with np.errstate(divide="ignore"):
        E = np.where(eye, 0.0, 1 / np.where(eye, 1.0, gaps))  # inf at a repeated eigenvalue, as the JVP rule
    W = np.empty(A.shape[:1] + np.shape(w0), dtype=np.result_type(w0))
    V = np.empty(A.shape[:1] + np.shape(v0), dtype=np.result_type(A, v0))
    C = np.empty_like(V)
    W[0], V[0], C[0] = w0, v0, np.eye(n)
    v0_h = np.conj(np.swapaxes(v0, -1, -2))
    for k in range(1, len(A)):
        r = v0_h @ (_matrix_dot(A[1: k + 1], V[k - 1::-1]) - np.einsum("j...ab,j...b->...ab", V[1:k], W[k - 1:0:-1]))
        W[k] = np.real(np.diagonal(r, 0, -2, -1))
        diagonal = np.einsum("j,j...ba,j...ba->...a", np.arange(k - 1, 0, -1.0), np.conj(C[1:k]), C[k - 1:0:-1]) / k
        C[k] = r * E - diagonal[..., None] * eye
        V[k] = v0 @ C[k]
    return W, V
