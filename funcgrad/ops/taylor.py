"""Taylor-mode rules of the op table (used by ``funcgrad.func.jet``): one ``deftaylor`` entry per op.

A rule maps one op call, seen as a ``TaylorCall`` ``c``, to the series of the op's result: a stacked
``(K + 1, *out.shape)`` array of normalized Taylor coefficients (see ``series.py``). Names a rule may use:
  c.x, c.y    the series of the op's first and second tensor inputs (None: constant along the curve)
  c.dx        the degree of c.x when known (a line x_0 + x_1 t has degree 1): higher terms are skipped
  c.out       the op's primal result;  c.arg("dim") any argument of the op by its parameter name
  c.linear()  the series pushed through the op's own JVP rule (ops/jvp.py), all K coefficients as one
              batch of tangents: the whole rule of a linear op, and of a product with a constant factor
Rules compute on arrays only (plain NumPy, so ``func.jit`` records them). Three kinds of entries:
  deflinear(...)             linear (and piecewise-linear) ops: ``c.linear()``
  deftaylor(name, product)   bilinear ops: the Cauchy product of the operands' series
  deftaylor(name, rule)      smooth ops: a recurrence of series.py
An op without an entry has ``taylor = None``; ``jet`` raises an error naming it.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.core.tensor import Tensor
from funcgrad.ops import series as S
from funcgrad.ops.jvp import _jvp
from funcgrad.ops.registry import OPS, OpSpec

__all__ = ["TaylorCall", "deftaylor", "deflinear", "degree"]

LN2, LN10 = math.log(2.0), math.log(10.0)


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

    def linear(self) -> Any:
        """The series of a linear op: ``out``, then the op's JVP rule on the K input coefficients as one batch
        of tangents (inputs without a series have none)."""
        T = _jvp(self.spec, self.args, self.out, [None if X is None else X[1:] for X in self.series])
        T = T.data if isinstance(T, Tensor) else T
        return np.concatenate([self.out[None], np.broadcast_to(T, (len(T),) + np.shape(self.out))])


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
    """A bilinear op (x * y, x @ y, ...): z_k = sum_j op(x_j, y_{k-j}); linear when a factor is constant."""
    X, Y = c.series
    if X is None or Y is None:
        return c.linear()
    if c.spec.name == "mul":
        return S.product(X, Y)
    i, j = c.spec.tensor_positions
    args = list(c.args)

    def op(a: Any, b: Any) -> Any:
        args[i], args[j] = a, b
        return c.spec.kernel(*args)

    rows = [c.out]
    for k in range(1, len(X)):
        total = op(X[0], Y[k])
        for m in range(1, k + 1):
            total = total + op(X[m], Y[k - m])
        rows.append(total)
    return np.stack(rows)


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
        K = S.order(next(X for X in c.series if X is not None))
        G, Y = (S.constant(np.asarray(v), K) if X is None else X for X, v in zip(c.series, (c.x0, c.y0)))
        D = derivative(Y)
        return S.product(G, np.conj(D) if np.iscomplexobj(D) else D)
    return rule


# ----- linear and piecewise-linear ops ------------------------------------------------------------------
deflinear("add", "sub", "neg", "clone", "alias", "to_copy", "remainder",
          "sum", "sum_to", "mean", "cumsum", "trace",
          "reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze", "expand", "broadcast_to",
          "permute", "transpose", "movedim", "diagonal", "diag", "triu", "tril", "repeat", "flip", "roll",
          "getitem", "index_put", "narrow", "select", "gather", "index_select", "take_along_dim",
          "scatter", "scatter_add", "masked_fill", "pad", "cat", "stack", "where",
          "relu", "maximum", "minimum", "clamp", "amax", "amin",             # the branch the primal takes
          "sign", "floor", "ceil", "round", "trunc")                          # zero series

# ----- products -------------------------------------------------------------------------------------------
for _name in ("mul", "matmul", "mm", "bmm", "dot", "vdot", "outer", "tensordot"):
    deftaylor(_name, product)
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
deftaylor("sqrt",  lambda c: S.sqrt(c.x, c.out))
deftaylor("rsqrt", lambda c: S.power(c.x, -0.5, c.out))

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

# ----- activations and special functions ------------------------------------------------------------------
deftaylor("sigmoid", lambda c: S.sigmoid(c.x, c.out, c.dx))
deftaylor("sigmoid_backward", times_derivative(lambda Y: Y - S.square(Y)))
deftaylor("erf",     lambda c: S.erf(c.x, c.out))
deftaylor("erfc",    lambda c: S.erf(c.x, c.out, sign=-1.0))
