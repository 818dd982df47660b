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
from funcgrad.core.grad_mode import enable_grad, is_grad_enabled, no_grad
from funcgrad.core.tangents import has_tangent
from funcgrad.core.tensor import Tensor
from funcgrad.functional._passes import as_transform
from funcgrad.functional._pytree import tree_flatten, tree_unflatten
from funcgrad.ops import taylor
from funcgrad.ops.registry import ELEMENTWISE, NONDIFF, OpSpec
from funcgrad.ops.taylor import NoTaylorRule

__all__ = ["jet", "nth_derivative", "directional_derivative", "NoTaylorRule"]


def _array(value: Any) -> Any:
    return value.data if isinstance(value, Tensor) else value


def _tensor_inputs(spec: OpSpec, full: tuple[Any, ...]) -> list[Any]:
    """The tensor arguments of an op call bound by ``spec.bind`` (each element of a sequence argument)."""
    return list(full[spec.params.index(spec.sequence)]) if spec.sequence else [full[p] for p in spec.tensor_positions]


class _JetLayer(dispatch.Layer):
    """Gives the result of every op that reads a series-carrying Tensor its series, by the op's Taylor rule."""

    def __init__(self, order: int, check: _ElementwiseCheck | None = None) -> None:
        self.order = order
        self.check = check  # follows which values are computed from the input element by element
        self.series: dict[int, tuple[Tensor, Any, int | None]] = {}  # id -> (the Tensor, kept alive; series; degree)
        self.arrays: set[int] = set()  # the ids of the tracked Tensors' arrays

    def track(self, tensor: Tensor, series: Any, degree: int | None = None) -> None:
        """Give ``tensor`` the stacked normalized coefficients ``series`` (``series[0]`` is its value), of which
        those above ``degree`` are known to be zero (None: not known)."""
        self.series[id(tensor)] = (tensor, series, degree)
        self.arrays.add(id(tensor.data))  # (kept alive with the Tensor: a node may save the array itself)

    def entry(self, value: Any) -> tuple[Any, int | None]:
        """The series of ``value`` and its degree; (None, 0) for a constant."""
        entry = self.series.get(id(value)) if isinstance(value, Tensor) else None
        return (entry[1], entry[2]) if entry is not None and entry[0] is value else (None, 0)

    def op(self, spec: OpSpec, proceed: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = proceed(args, kwargs)
        if not spec.differentiable:
            return out
        full = spec.bind(args, kwargs)
        inputs = _tensor_inputs(spec, full)
        if spec.sequence:
            pos = spec.params.index(spec.sequence)
            arrays = full[:pos] + ([_array(a) for a in inputs],) + full[pos + 1:]
            entries = [self.entry(a) for a in inputs]
        else:
            arrays = tuple(_array(a) for a in full)
            entries = [self.entry(a) if rule is not NONDIFF else (None, 0)
                       for a, rule in zip(inputs, spec.rules.values())]
        series = [s for s, _ in entries]
        if all(s is None for s in series):
            return out
        if self.check is not None:
            self.check.follow(spec, inputs, out)
        if spec.taylor is None:
            raise NoTaylorRule(f"jet: the op '{spec.name}' has no Taylor-mode rule (funcgrad/ops/taylor.py); "
                               "differentiate through it with nested reverse mode (autograd.grad with "
                               "create_graph=True) instead")
        if not spec.complex and any(np.iscomplexobj(s) for s in series if s is not None):
            raise NoTaylorRule(f"jet: the op '{spec.name}' has no Taylor-mode rule for complex values (its rule "
                               "is a real one); differentiate a real-valued formulation (of .real and .imag)")
        outs = out if spec.multi_output else (out,)
        if any(isinstance(o, Tensor) and o.dtype.kind in "fc" for o in outs):
            degrees = [d for _, d in entries]
            # not suspended around the rule: the ops it calls get arrays, which carry no series, so this layer
            # passes them straight on (cheaper than uninstalling it and back for every op)
            values = tuple(_array(o) for o in outs)
            result = spec.taylor(taylor.TaylorCall(spec, arrays, series, values if spec.multi_output else values[0],
                                                   degrees))
            degree = taylor.degree(spec.taylor, degrees, self.order)
            for o, s in zip(outs, result if spec.multi_output else (result,)):
                if isinstance(o, Tensor) and o.dtype.kind in "fc":
                    self.track(o, s, degree)
        return out

    def inplace(self, tensor: Any, op: str, args: tuple[Any, ...] = ()) -> None:
        # an in-place write would change the value, and the series of it and of every alias, behind this layer
        values = [*_aliases(tensor), *(v for a in args for v in (a if isinstance(a, tuple | list) else (a,)))]
        if any(self.entry(v)[0] is not None for v in values):
            raise NoTaylorRule(f"jet: the in-place op '{op}_' writes a value along the Taylor curve; Taylor mode "
                               "follows out-of-place ops only: write it out of place (y = y * 2, not y *= 2; "
                               "fg.where or fg.cat instead of y[i] = ...), or use nested reverse mode (autograd.grad "
                               "with create_graph=True)")

    def node(self, node: Any, proceed: Callable[[list[Any], bool], Any], grads: list[Any], as_tensors: bool) -> Any:
        # a backward pass runs on arrays: a saved value with a series would be a constant of its rules
        saved = node._saved
        if isinstance(saved, tuple) and any(self.entry(v)[0] is not None or id(v) in self.arrays for v in saved):
            raise NoTaylorRule(f"jet: a backward pass (autograd.grad, funcgrad.func's grad, jacrev, vjp...) runs "
                               f"{node.name()} on a value with a Taylor series: Taylor mode does not follow backward "
                               "passes; use nested reverse mode (nth_derivative and directional_derivative fall back "
                               "to it)")
        return proceed(grads, as_tensors)

    def converted(self, tensor: Any, how: str = dispatch.CONVERTED) -> None:
        # it would be a constant along the curve
        if self.entry(tensor)[0] is not None:
            raise NoTaylorRule(f"jet: a value with a Taylor series is {how}, which would make it a constant along "
                               "the curve; keep it a Tensor (NumPy's functions take Tensors), or use nested reverse "
                               "mode (nth_derivative and directional_derivative fall back to it)")


def _aliases(tensor: Tensor) -> list[Tensor]:
    """``tensor``, its base and the live views of the base: what an in-place write into ``tensor`` changes."""
    base = tensor._base if tensor._base is not None else tensor
    extra = base._extra
    views = [v for v in (ref() for ref in (extra.views or ())) if v is not None] if extra is not None else []
    return [tensor, base, *views]


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
        NoTaylorRule (a NotImplementedError) naming the first op without a Taylor rule a series reaches, or an
        in-place write of a value with a series; NotImplementedError for an argument being differentiated
        (requiring grad, or with a forward-mode tangent): the results, arrays, would silently be constants.

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
    how = _traced([*primals, *(term for terms in series for term in terms)])
    if how is not None:
        raise NotImplementedError(f"jet: an argument carries {how}; jet computes its results as arrays, so they "
                                  "cannot be differentiated: use nested reverse mode (autograd.grad with "
                                  "create_graph=True), or nth_derivative / directional_derivative, which take it "
                                  "for an x that requires grad")
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


def _propagate(fun: Callable[..., Any], tracked: list[tuple[Tensor, Any, int | None]], K: int,
               check: _ElementwiseCheck | None = None) -> tuple[Any, _JetLayer]:
    """``fun`` called on the Tensors of ``tracked`` (each with its series and degree) under a jet layer of order K
    (which tells ``check`` of every op on values with a series)."""
    layer = _JetLayer(K, check)
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

    Raises:
        ValueError when ``f`` computes its result from ``x`` otherwise than element by element (a sum,
        ``cumsum``, indexing, a matrix product...), naming the op: the derivative of such an ``f`` is not
        the elementwise one (``directional_derivative`` and ``hessian`` differentiate those).

    Example:
        >>> import numpy as np
        >>> import funcgrad as fg
        >>> nth_derivative(fg.sin, 4)(np.array([0.5, 1.0]))  # sin again
        array([0.47942554, 0.84147098])
    """
    _check_order(n, "nth_derivative")

    def derivative(x: Any) -> Any:
        shape = np.shape(_array(x))
        out = _derivative_along(f, x, np.ones(shape), n, _nested_elementwise, elementwise=True)
        if np.size(_array(out)) == 1 and np.shape(_array(out)) != shape and int(np.prod(shape)) == 1:
            out = np.reshape(out, shape)  # f of a one-element x may return its value in any one-element shape
        if np.shape(_array(out)) != shape:
            raise ValueError(f"nth_derivative: f must return one value per element of x (an array of x's shape "
                             f"{shape}), got shape {np.shape(_array(out))}")
        return out

    return derivative


def directional_derivative(f: Callable[[Any], Any], n: int) -> Callable[[Any, Any], Any]:
    """``D^n f(x)[v, ..., v]``: the ``n``-th derivative of ``f`` along ``v``, d^n/dt^n f(x + t v) at t = 0.

    ``directional_derivative(f, n)(x, v)`` has the structure of ``f(x)`` (an array, or a pytree of them).
    One ``jet`` of order ``n`` when every op of ``f`` has a Taylor rule, else ``n`` nested reverse passes
    over t.

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
        return _derivative_along(f, x, v, n, _nested_directional, elementwise=False)

    return derivative


def _check_order(n: int, caller: str) -> None:
    if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 0:
        raise ValueError(f"{caller}: the order n must be a non-negative int, got {n!r}")


# ops whose result's element i is computed from their inputs' elements i alone, besides those whose JVP rule is
# ELEMENTWISE; and moves that are the identity when the shape stays x's
_ALSO_ELEMENTWISE = frozenset({"alias", "to_copy", "conj_physical", "real", "imag", "sgn", "polar", "tanh_backward",
                               "sigmoid_backward", "reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze",
                               "expand", "broadcast_to", "sum_to"})


class _ElementwiseCheck(dispatch.Layer):
    """Follows which Tensors ``f`` computes from ``x`` element by element (element i from x's element i alone,
    in x's shape: ``aligned``) and which from x otherwise (``mixed``), naming the first op that mixed them."""

    def __init__(self, x: Tensor) -> None:
        self.shape = x.shape
        self.aligned: dict[int, Tensor] = {id(x): x}
        self.mixed: dict[int, Tensor] = {}
        self.mixer: str | None = None

    def _mix(self, values: Any, name: str) -> None:
        for value in values if isinstance(values, tuple | list) else (values,):
            if isinstance(value, Tensor):
                self.aligned.pop(id(value), None)
                self.mixed[id(value)] = value
        self.mixer = self.mixer or name

    def op(self, spec: OpSpec, proceed: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """(Installed for nested reverse mode; under jet, the jet layer calls ``follow``.)"""
        out = proceed(args, kwargs)
        if spec.differentiable:
            self.follow(spec, _tensor_inputs(spec, spec.bind(args, kwargs)), out)
        return out

    def follow(self, spec: OpSpec, inputs: list[Any], out: Any) -> None:
        """Note what ``out``, the result of op ``spec`` on tensor arguments ``inputs``, is."""
        aligned, mixed = self.aligned, self.mixed
        read: Tensor | None = None
        for a in inputs:
            if not isinstance(a, Tensor):  # (None, a number: in neither table, where .get gives None)
                continue
            if mixed.get(id(a)) is a:
                self._mix(out, spec.name)
                return
            read = a if aligned.get(id(a)) is a else read
        if read is None:
            return
        if isinstance(out, Tensor) and out.shape == self.shape and (  # (x's shape, which every aligned input has)
                spec.jvp is ELEMENTWISE or spec.name in _ALSO_ELEMENTWISE or _same_elements(read, out)):
            aligned[id(out)] = out
        else:
            self._mix(out, spec.name)

    def inplace(self, tensor: Any, op: str, args: tuple[Any, ...] = ()) -> None:
        # what an in-place op writes is not followed: the tensor, its base and their views count as mixed
        self._mix(_aliases(tensor), f"{op}_ (in place)")

    def verify(self, out: Any, caller: str) -> None:
        """Raise unless ``out`` (which depends on x) was computed from x element by element."""
        if self.aligned.get(id(out)) is not out:
            how = f"the op '{self.mixer}' mixes elements of x" if self.mixer else "its result is not computed " \
                "from x element by element"
            raise ValueError(f"{caller}: f is not elementwise ({how}), so it has no elementwise derivative: "
                             f"{caller}(f, n)(x) applies a scalar function to every element of x, as vmap of nested "
                             "grads. Differentiate a function of the whole array with directional_derivative(f, "
                             "n)(x, v), or funcgrad.func.jacfwd/jacrev/hessian")


def _same_elements(a: Tensor, out: Tensor) -> bool:
    """Whether ``out`` views ``a``'s elements in ``a``'s order (``x[...]``, ``x[:]``): the same memory, strides
    and shape."""
    d, e = a.data, out.data
    return (type(d) is type(e) is np.ndarray and e.shape == d.shape and e.strides == d.strides
            and e.__array_interface__["data"][0] == d.__array_interface__["data"][0])


def _watched(f: Callable[[Any], Any], check: _ElementwiseCheck | None) -> Callable[[Any], Any]:
    """``f`` run under ``check`` (when there is one)."""
    if check is None:
        return f

    def run(x: Any) -> Any:
        dispatch.push(check)
        try:
            return f(x)
        finally:
            dispatch.pop(check)
    return run


def _values(value: Any) -> Any:
    """An argument's array: a Tensor's data, a list or a scalar converted; arrays (traced ones too) as they are."""
    if isinstance(value, Tensor):
        return value.data
    return value if hasattr(value, "shape") and hasattr(value, "dtype") else np.asarray(value)


def _direction(v: Any, dtype: Any) -> Any:
    """The direction ``v`` as an array of x's ``dtype`` (float32 for a float32 x; a complex v stays complex)."""
    d = _values(v)
    return d.astype(dtype) if not np.iscomplexobj(d) or np.dtype(dtype).kind == "c" else d


def _traced(values: Sequence[Any]) -> str | None:
    """What differentiates one of ``values`` from outside (a Tensor requiring grad in grad mode, one with a
    forward-mode tangent, or one with a series of an enclosing jet), or None."""
    jets = [layer for layer in dispatch.DISPATCH.layers if isinstance(layer, _JetLayer)]
    for value in values:
        if not isinstance(value, Tensor):
            continue
        if has_tangent(value):
            return "a forward-mode tangent (jvp, jacfwd, hessian)"
        if any(layer.entry(value)[0] is not None for layer in jets):
            return "the series of an enclosing jet"
        if value.requires_grad and is_grad_enabled():
            return "a gradient (it requires grad)"
    return None


def _derivative_along(f: Callable[[Any], Any], x: Any, v: Any, n: int,
                      nested: Callable[[Callable[[Any], Any], Tensor, Tensor, int, bool], Any],
                      elementwise: bool) -> Any:
    """d^n/dt^n f(x + t v) at t = 0 (a pytree like f's result), by jet or else by ``nested`` reverse mode; arrays
    out for arrays in. ``elementwise``: raise unless f computes its result from x element by element (for an x
    of more than one element). An x (or v) requiring grad takes nested reverse mode with its graph kept, so the
    result can be differentiated further (reverse mode over it); forward mode and jet over it are an error."""
    caller = "nth_derivative" if elementwise else "directional_derivative"
    how = _traced([x, v])
    if how is not None and "gradient" not in how:  # (under an enclosing jet: NoTaylorRule, so that an enclosing
        error = NoTaylorRule if "jet" in how else NotImplementedError  # nth/directional_derivative goes nested)
        raise error(f"{caller}: x carries {how}; the derivative is computed outside forward mode, so it cannot be "
                    "differentiated in forward mode or by jet: differentiate it in reverse mode (grad, jacrev, "
                    "autograd.grad) instead")
    keep = how is not None
    numpy_out = not isinstance(x, Tensor)
    data = _values(x)
    if n == 0:
        out = f(x)
    else:
        t = Tensor(data * 1.0)
        check = _ElementwiseCheck(t) if elementwise and t.data.size > 1 else None
        try:
            if keep:
                raise NoTaylorRule("jet: results are arrays, not differentiable")
            results, depends, out = _along_line(f, t, v, n, check)
        except NoTaylorRule:
            with enable_grad():
                t = x * 1.0 if keep else Tensor(data * 1.0)
            check = _ElementwiseCheck(t) if check is not None else None
            w = v if isinstance(v, Tensor) else Tensor(_direction(v, t.dtype))
            results, depends, out = nested(_watched(f, check), t, w, n, keep)
        for result, dependent in zip(results, depends):
            if dependent and check is not None:
                check.verify(result, caller)
    leaves, spec = tree_flatten(out)
    leaves = [(leaf.data if numpy_out else leaf if keep else leaf.detach()) if isinstance(leaf, Tensor) else
              (leaf if numpy_out else Tensor(leaf)) for leaf in leaves]
    return tree_unflatten(spec, leaves)


def _along_line(f: Callable[[Any], Any], t: Tensor, v: Any, n: int,
                check: _ElementwiseCheck | None) -> tuple[list[Any], list[bool], Any]:
    """d^n/dt^n f(x + t v) at t = 0 by one jet of order n of the line x + t v (degree 1: its higher terms,
    known to be zero, are skipped), from ``t`` holding x: f's result leaves, whether each depends on x, and the
    derivatives with the result's structure. The line has x's dtype (a real direction for a float32 x: float32)."""
    direction = _direction(v, t.dtype)
    line = np.concatenate([t.data[None], direction[None], np.zeros((n - 1,) + np.shape(direction), t.dtype)])
    out, layer = _propagate(f, [(t, line, 1)], n, check)
    leaves, spec = tree_flatten(out)
    coefficients = [layer.entry(leaf)[0] for leaf in leaves]
    terms = [np.zeros(np.shape(_array(leaf))) if c is None else c[n, ...] * math.factorial(n)
             for leaf, c in zip(leaves, coefficients)]
    return leaves, [c is not None for c in coefficients], tree_unflatten(spec, terms)


def _nested_elementwise(f: Callable[[Any], Any], x: Tensor, v: Tensor, n: int,
                        keep: bool) -> tuple[list[Any], list[bool], Any]:
    """n nested ``grad(y.sum(), x)``: the n-th derivative of an elementwise ``f`` (v is all ones); ``keep``: x is
    computed from a Tensor requiring grad, and the result keeps its graph."""
    with enable_grad():
        if not keep:
            x.requires_grad_()
        with as_transform():  # (a transform f calls keeps what depends on x through its closure attached)
            out = y = f(x)
        depends = isinstance(y, Tensor) and y.requires_grad
        for i in range(n):
            if not isinstance(y, Tensor) or not y.requires_grad:
                y = Tensor(np.zeros(np.shape(_array(out))))
                break
            (y,) = grad(y.sum(), x, create_graph=keep or i < n - 1, allow_unused=True)
            if y is None:
                y = Tensor(np.zeros(np.shape(_array(out))))
                break
    return [out], [depends], y


def _nested_directional(f: Callable[[Any], Any], x: Tensor, v: Tensor, n: int,
                        keep: bool) -> tuple[list[Any], list[bool], Any]:
    """d^n/dt^n f(x + t v) by n reverse-over-reverse derivatives in the scalar t (each a JVP by the
    double-backward trick: u -> grad(y, t, u) is linear in u, and its gradient in u is dy/dt), per leaf of
    f's result; every pass keeps its graph, so a result from an x requiring grad (``keep``) stays differentiable."""
    t = Tensor(np.zeros(()), requires_grad=True)
    with enable_grad():
        with as_transform():  # (as in _nested_elementwise)
            leaves, spec = tree_flatten(f(x + t * v))
        return (leaves, [isinstance(y, Tensor) and y.requires_grad for y in leaves],
                tree_unflatten(spec, [_nested_along_t(y, t, n) for y in leaves]))


def _nested_along_t(y: Any, t: Tensor, n: int) -> Tensor:
    """d^n y / dt^n for ``y`` computed from the scalar ``t`` (its graph kept for the other leaves)."""
    shape = np.shape(_array(y))
    for _ in range(n):
        if not isinstance(y, Tensor) or not y.requires_grad:
            return Tensor(np.zeros(shape))
        u = Tensor(np.zeros(y.shape), requires_grad=True)
        (dt,) = grad(y, t, grad_outputs=u, create_graph=True, allow_unused=True)
        if dt is None:
            return Tensor(np.zeros(shape))
        (y,) = grad(dt, u, create_graph=True)
    return y
