"""Taylor mode: ``jet`` pushes a truncated Taylor series through a function in one forward pass, op by op,
by the op table's Taylor rules (``funcgrad/ops/taylor.py``), as ``jax.experimental.jet`` does.

For the curve x(t) = x_0 + x_1 t + x_2 t^2 / 2! + ... + x_K t^K / K! (``primals`` hold x_0, ``series``
the terms x_1..x_K), ``jet(f, primals, series)`` returns y_0 = f(x_0) and y_k = d^k/dt^k f(x(t)) at
t = 0: all K derivatives along the curve for O(K^2) work per op, where K nested reverse passes cost
a graph that grows exponentially with K. ``nth_derivative`` and ``directional_derivative`` are built
on it, and fall back to nested reverse mode for functions using an op without a Taylor rule.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.core import dispatch
from funcgrad.core.backward import grad
from funcgrad.core.grad_mode import enable_grad, no_grad
from funcgrad.core.tensor import Tensor
from funcgrad.functional._pytree import tree_flatten, tree_unflatten
from funcgrad.ops import taylor
from funcgrad.ops.registry import NONDIFF, OpSpec

__all__ = ["jet", "nth_derivative", "directional_derivative", "NoTaylorRule"]


class NoTaylorRule(NotImplementedError):
    """A series reached an op without a Taylor-mode rule."""


def _array(value: Any) -> Any:
    return value.data if isinstance(value, Tensor) else value


class _JetLayer(dispatch.Layer):
    """Gives the result of every op that reads a series-carrying Tensor its series, by the op's Taylor rule."""

    def __init__(self, order: int) -> None:
        self.order = order
        self.series: dict[int, tuple[Tensor, Any, int | None]] = {}  # id -> (the Tensor, kept alive; series; degree)

    def track(self, tensor: Tensor, series: Any, degree: int | None = None) -> None:
        """Give ``tensor`` the stacked normalized coefficients ``series`` (``series[0]`` is its value), of which
        those above ``degree`` are known to be zero (None: not known)."""
        self.series[id(tensor)] = (tensor, series, degree)

    def entry(self, value: Any) -> tuple[Any, int | None]:
        """The series of ``value`` and its degree; (None, 0) for a constant."""
        entry = self.series.get(id(value)) if isinstance(value, Tensor) else None
        return (entry[1], entry[2]) if entry is not None and entry[0] is value else (None, 0)

    def op(self, spec: OpSpec, proceed: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = proceed(args, kwargs)
        if not spec.differentiable:
            return out
        full = spec.bind(args, kwargs)
        if spec.sequence:
            pos = spec.params.index(spec.sequence)
            inputs = list(full[pos])
            arrays = full[:pos] + ([_array(a) for a in inputs],) + full[pos + 1:]
            entries = [self.entry(a) for a in inputs]
        else:
            inputs = [full[p] for p in spec.tensor_positions]
            arrays = tuple(_array(a) for a in full)
            entries = [self.entry(a) if rule is not NONDIFF else (None, 0)
                       for a, rule in zip(inputs, spec.rules.values())]
        series = [s for s, _ in entries]
        if all(s is None for s in series):
            return out
        if spec.taylor is None or spec.multi_output:
            raise NoTaylorRule(f"jet: the op '{spec.name}' has no Taylor-mode rule (funcgrad/ops/taylor.py); "
                               "differentiate through it with nested reverse mode (autograd.grad with "
                               "create_graph=True) instead")
        if isinstance(out, Tensor) and out.dtype.kind in "fc":
            degrees = [d for _, d in entries]
            # not suspended around the rule: the ops it calls get arrays, which carry no series, so this layer
            # passes them straight on (cheaper than uninstalling it and back for every op)
            result = spec.taylor(taylor.TaylorCall(spec, arrays, series, out.data, degrees))
            self.track(out, result, taylor.degree(spec.taylor, degrees, self.order))
        return out


def _input(value: Any, terms: Sequence[Any], index: int, factorial_scaled: bool) -> tuple[Tensor, Any]:
    """Argument ``index`` as a Tensor and its stacked normalized series."""
    if isinstance(value, dict | list | tuple) or value is None:
        raise ValueError(f"jet: primal value at position {index} is not an array")
    x = Tensor(_array(value))
    if x.dtype.kind not in "fc":
        x = Tensor(x.data.astype(np.float64))
    coefficients = [x.data]
    for k, term in enumerate(terms, start=1):
        t = _array(term)
        if isinstance(t, dict | list | tuple) or np.shape(t) != x.shape:
            raise ValueError(f"jet: term {k - 1} for argument {index} must be an array of the primal's shape "
                             f"{x.shape}, got {np.shape(t)}")
        coefficients.append(t / math.factorial(k) if factorial_scaled else t * 1.0)
    return x, np.stack(coefficients)


def jet(fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Sequence[Any]],
        factorial_scaled: bool = True) -> tuple[Any, Any]:
    """Taylor-mode higher-order differentiation, as ``jax.experimental.jet.jet``.

    Args:
        fun: a function of arrays written with funcgrad ops; it may return a pytree of arrays.
        primals: a tuple (or list) of ``fun``'s positional arguments, arrays or scalars: x_0.
        series: one sequence per argument of the terms x_1..x_K (all of the same length K), each shaped
            like its primal: the curve is x(t) = x_0 + x_1 t + x_2 t^2 / 2! + ... .
        factorial_scaled: True (JAX's default): terms are derivatives along the curve, as above; False:
            terms are the normalized Taylor coefficients (x(t) = x_0 + x_1 t + x_2 t^2 + ...), and so are
            the results.

    Returns:
        ``(primals_out, series_out)``: ``fun(*primals)`` and, with its tree structure, a list of the K terms
        y_k = d^k/dt^k fun(x(t)) at t = 0 per output leaf (NumPy arrays).

    Raises:
        NoTaylorRule (a NotImplementedError) naming the first op without a Taylor rule a series reaches.

    Example:
        >>> import numpy as np
        >>> import funcgrad as fg
        >>> y0, (y1, y2, y3) = jet(fg.exp, (np.array(0.0),), ((np.array(1.0), np.array(0.0), np.array(0.0)),))
        >>> float(y0), float(y1), float(y2), float(y3)
        (1.0, 1.0, 1.0, 1.0)
    """
    if not isinstance(primals, tuple | list) or not isinstance(series, tuple | list):
        raise TypeError("jet: primals and series must be tuples (or lists), one entry per argument of fun, "
                        f"got {type(primals).__name__} and {type(series).__name__}")
    if len(primals) != len(series):
        raise ValueError(f"jet: {len(primals)} primals but {len(series)} series; give one series per argument")
    orders = {len(terms) for terms in series}
    if len(orders) > 1:
        raise ValueError("jet terms have inconsistent lengths for different arguments")
    K = orders.pop() if orders else 0
    tracked = [(*_input(value, terms, i, factorial_scaled), None)
               for i, (value, terms) in enumerate(zip(primals, series))]
    out, layer = _propagate(fun, tracked, K)  # type: ignore[arg-type]
    leaves, spec = tree_flatten(out)
    values, terms_out = [], []
    for leaf in leaves:
        value = np.asarray(leaf) if not isinstance(leaf, Tensor) else leaf.data
        coefficients = layer.entry(leaf)[0]
        if coefficients is None:
            terms_out.append([np.zeros_like(value) for _ in range(K)])
        else:
            terms_out.append([coefficients[k, ...] * math.factorial(k) if factorial_scaled else coefficients[k, ...]
                              for k in range(1, K + 1)])
        values.append(value)
    return tree_unflatten(spec, values), tree_unflatten(spec, terms_out)


def _propagate(fun: Callable[..., Any], tracked: list[tuple[Tensor, Any, int | None]], K: int) -> tuple[Any, _JetLayer]:
    """``fun`` called on the Tensors of ``tracked`` (each with its series and degree) under a jet layer of order K."""
    layer = _JetLayer(K)
    for x, coefficients, degree in tracked:
        layer.track(x, coefficients, degree)
    dispatch.push(layer)
    try:
        with no_grad():
            return fun(*[x for x, _, _ in tracked]), layer
    finally:
        dispatch.pop(layer)


# ----- derivatives built on jet ---------------------------------------------------------------------------
def nth_derivative(f: Callable[[Any], Any], n: int) -> Callable[[Any], Any]:
    """The ``n``-th derivative of a scalar function of a scalar, applied elementwise over an array.

    ``nth_derivative(f, n)(x)`` is d^n f / dx^n at every element of ``x``, for an ``f`` that maps each
    element on its own (what ``vmap`` of ``n`` nested ``grad``s gives): one ``jet`` of order ``n`` when
    every op of ``f`` has a Taylor rule, else ``n`` nested reverse passes (``create_graph=True``).

    Example:
        >>> import numpy as np
        >>> import funcgrad as fg
        >>> nth_derivative(fg.sin, 4)(np.array([0.5, 1.0]))  # sin again
        array([0.47942554, 0.84147098])
    """
    _check_order(n, "nth_derivative")

    def derivative(x: Any) -> Any:
        ones = np.ones(np.shape(_array(x)))
        return _derivative_along(f, x, ones, n, "nth_derivative", _nested_elementwise)

    return derivative


def directional_derivative(f: Callable[[Any], Any], n: int) -> Callable[[Any, Any], Any]:
    """``D^n f(x)[v, ..., v]``: the ``n``-th derivative of ``f`` along ``v``, d^n/dt^n f(x + t v) at t = 0.

    ``directional_derivative(f, n)(x, v)`` has ``f(x)``'s shape. One ``jet`` of order ``n`` when every op
    of ``f`` has a Taylor rule, else ``n`` nested reverse passes over t.

    Example:
        >>> import numpy as np
        >>> import funcgrad as fg
        >>> float(directional_derivative(lambda x: fg.sum(x ** 3), 3)(np.zeros(2), np.array([1.0, 2.0])))
        54.0
    """
    _check_order(n, "directional_derivative")

    def derivative(x: Any, v: Any) -> Any:
        if np.shape(_array(v)) != np.shape(_array(x)):
            raise ValueError(f"directional_derivative: the direction has shape {np.shape(_array(v))} but x has "
                             f"shape {np.shape(_array(x))}; they must match")
        return _derivative_along(f, x, v, n, "directional_derivative", _nested_directional)

    return derivative


def _check_order(n: int, caller: str) -> None:
    if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 0:
        raise ValueError(f"{caller}: the order n must be a non-negative int, got {n!r}")


def _derivative_along(f: Callable[[Any], Any], x: Any, v: Any, n: int, caller: str,
                      nested: Callable[[Callable[[Any], Any], Tensor, Tensor, int], Tensor]) -> Any:
    """d^n/dt^n f(x + t v) at t = 0, by jet or else by ``nested`` reverse mode; arrays out for arrays in."""
    numpy_out = not isinstance(x, Tensor)
    if n == 0:
        out = f(x)
    else:
        try:
            out = _along_line(f, x, v, n)
        except NoTaylorRule:
            out = nested(f, Tensor(_array(x) * 1.0), Tensor(_array(v) * 1.0), n)
    if isinstance(out, Tensor):
        return out.data if numpy_out else out.detach()
    return out if numpy_out else Tensor(out)


def _along_line(f: Callable[[Any], Any], x: Any, v: Any, n: int) -> Any:
    """d^n/dt^n f(x + t v) at t = 0 by one jet of order n of the line x + t v (degree 1: its higher terms,
    known to be zero, are skipped), for an ``f`` returning one array."""
    t = Tensor(_array(x) * 1.0)
    direction = _array(v) * 1.0
    line = np.concatenate([t.data[None], direction[None], np.zeros((n - 1,) + np.shape(direction))])
    out, layer = _propagate(f, [(t, line, 1)], n)
    coefficients = layer.entry(out)[0]
    if coefficients is None:  # f does not depend on x
        return np.zeros(np.shape(_array(out)))
    return coefficients[n, ...] * math.factorial(n)


def _nested_elementwise(f: Callable[[Any], Any], x: Tensor, v: Tensor, n: int) -> Tensor:
    """n nested ``grad(y.sum(), x)``: the n-th derivative of an elementwise ``f`` (v is all ones)."""
    x.requires_grad_()
    with enable_grad():
        y = f(x)
        for i in range(n):
            if not isinstance(y, Tensor) or not y.requires_grad:
                return Tensor(np.zeros(x.shape))
            (y,) = grad(y.sum(), x, create_graph=i < n - 1, allow_unused=True)
            if y is None:
                return Tensor(np.zeros(x.shape))
    return y


def _nested_directional(f: Callable[[Any], Any], x: Tensor, v: Tensor, n: int) -> Tensor:
    """d^n/dt^n f(x + t v) by n reverse-over-reverse derivatives in the scalar t (each a JVP by the
    double-backward trick: u -> grad(y, t, u) is linear in u, and its gradient in u is dy/dt)."""
    t = Tensor(np.zeros(()), requires_grad=True)
    with enable_grad():
        y = f(x + t * v)
        for i in range(n):
            if not isinstance(y, Tensor) or not y.requires_grad:
                return Tensor(np.zeros(np.shape(_array(y))))
            u = Tensor(np.zeros(y.shape), requires_grad=True)
            (dt,) = grad(y, t, grad_outputs=u, create_graph=True, allow_unused=True)
            if dt is None:
                return Tensor(np.zeros(y.shape))
            (y,) = grad(dt, u, create_graph=i < n - 1)
    return y
