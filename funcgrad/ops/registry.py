"""Turns table entries into functions: ``defop`` builds an op's public function and its node class.

An entry is a forward kernel on arrays and one backward rule per differentiable input, keyed by
the input's parameter name. The generated function runs the kernel and records a node only when
an input requires grad and grad mode is on. Called with plain arrays it returns the kernel's result
untouched: that is how one rule serves both backward paths (arrays when ``create_graph=False``,
Tensors that record their own graph when ``create_graph=True``).

This module knows nothing about any particular op and nothing about the engine's order.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.autograd.dispatch import DISPATCH
from funcgrad.autograd.grad_mode import STATE
from funcgrad.autograd.graph import Node, SavedOutput, next_sequence_nr, saved_version

__all__ = ["defop", "nondiff", "composite", "tensor_method", "NONDIFF", "LINEAR", "ELEMENTWISE", "OPS",
           "COMPOSITES", "METHODS", "OpSpec"]


class _Marker:
    """A named sentinel used in the table."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NONDIFF = _Marker("NONDIFF")          # a tensor input with no derivative (indices, conditions)
LINEAR = _Marker("LINEAR")            # jvp: apply the op itself to the tangent
ELEMENTWISE = _Marker("ELEMENTWISE")  # jvp: the VJP rule with the tangent as g (diagonal Jacobian)
_REQUIRED = _Marker("REQUIRED")
NO_EDGE: tuple[None, int] = (None, 0)

OPS: dict[str, OpSpec] = {}
COMPOSITES: dict[str, Callable[..., Any]] = {}  # public functions built from ops, not table entries
METHODS: dict[str, Callable[..., Any]] = {}     # Tensor methods whose signature differs from the function's


class OpSpec:
    """Everything the table says about one op, resolved once at registration."""

    def __init__(self, name: str, kernel: Callable[..., Any], params: tuple[str, ...],
                 defaults: tuple[Any, ...], rules: dict[str, Any], sequence: str | None,
                 multi_output: bool, jvp: Any) -> None:
        self.name = name
        self.kernel = kernel
        self.params = params
        self.defaults = defaults
        self.rules = rules
        self.sequence = sequence
        self.multi_output = multi_output
        self.jvp = jvp
        self.plain: Callable[..., Any] = kernel  # the op function without the dispatch check, set by defop
        self.tensor_positions = tuple(params.index(p) for p in rules)
        self.differentiable = any(r is not NONDIFF for r in rules.values())
        wanted: list[str] = []
        bound = []
        for slot, rule in rules.items():
            if rule is NONDIFF or rule is None:
                bound.append((rule, slot, ()))
                continue
            names = _rule_arguments(name, slot, rule, params)
            for n in names:
                if n not in wanted:
                    wanted.append(n)
            bound.append((rule, slot, tuple(wanted.index(n) for n in names)))
        if multi_output and "out" not in wanted:
            wanted.append("out")  # to materialize zero gradients for unused outputs
        self.saved_names = tuple(wanted)
        # for each saved name, the inputs whose rules use it: saved only when one of them needs a grad
        self.saved_users = tuple(tuple(k for k, (rule, _, idx) in enumerate(bound) if i in idx)
                                 for i in range(len(wanted)))
        self.out_index = wanted.index("out") if "out" in wanted else -1
        self.saved_positions = tuple(_saved_position(n, params) for n in wanted)
        self.node_class = _node_class(self, tuple(bound))

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Arguments as a full positional tuple, defaults filled in; TypeError as Python would say."""
        n = len(self.params)
        if len(args) > n:
            raise TypeError(f"{self.name}() takes {n} arguments but {len(args)} were given")
        values = list(args) + list(self.defaults[len(args):])
        for key, value in kwargs.items():
            try:
                i = self.params.index(key)
            except ValueError:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'") from None
            if i < len(args):
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
            values[i] = value
        for p, v in zip(self.params, values):
            if v is _REQUIRED:
                raise TypeError(f"{self.name}() missing required argument '{p}'")
        return tuple(values)


def _saved_position(name: str, params: tuple[str, ...]) -> int:
    """Where a saved name comes from: -1 the output, i >= 0 argument i, -(i + 2) the shape of argument i."""
    if name == "out":
        return -1
    if name in params:
        return params.index(name)
    return -(params.index(name[:-len("_shape")]) + 2)


def _rule_arguments(op: str, slot: str, rule: Callable[..., Any], params: tuple[str, ...]) -> list[str]:
    names = list(inspect.signature(rule).parameters)
    if not names or names[0] != "g":
        raise TypeError(f"defop('{op}'): the rule for '{slot}' must take the output gradient 'g' first")
    for n in names[1:]:
        if n != "out" and n not in params and not (n.endswith("_shape") and n[:-6] in params):
            raise TypeError(f"defop('{op}'): the rule for '{slot}' names '{n}', which is neither 'out', "
                            f"a parameter of the forward ({', '.join(params)}) nor '<parameter>_shape'")
    return names[1:]


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _node_class(spec: OpSpec, bound: tuple[Any, ...]) -> type[Node]:
    base = _SequenceOpNode if spec.sequence else _OpNode
    attrs = {"_name": f"{_camel(spec.name)}Backward0", "_rules": bound, "_spec": spec}
    if not spec.multi_output:
        attrs["__slots__"] = ()  # multi-output nodes keep a __dict__ for their per-call _n_outputs
    return type(f"{_camel(spec.name)}Backward0", (base,), attrs)


class _OpNode(Node):
    """A node generated from a table entry: runs one rule per input that needs a gradient."""

    __slots__ = ()
    _rules: tuple[Any, ...] = ()
    _spec: OpSpec

    def _gradient(self, grad_outputs: list[Any], values: tuple[Any, ...]) -> Any:
        if not self._spec.multi_output:
            return grad_outputs[0]
        outs = values[self._spec.out_index]
        return tuple(g if g is not None else np.zeros(o.shape, o.dtype) for g, o in zip(grad_outputs, outs))

    def apply(self, grad_outputs: list[Any], create_graph: bool) -> list[Any]:
        values = self.unpack_saved(create_graph) if self._saved else ()
        g = self._gradient(grad_outputs, values) if self._spec.multi_output else grad_outputs[0]
        grads = []
        for (rule, slot, idx), (edge, _) in zip(self._rules, self.next_functions):
            if edge is None:
                grads.append(None)
            elif rule is None or rule is NONDIFF:
                raise NotImplementedError(
                    f"the derivative of '{self._spec.name}' with respect to '{slot}' is not implemented")
            elif not idx:
                grads.append(rule(g))
            elif len(idx) == 1:
                grads.append(rule(g, values[idx[0]]))
            else:
                grads.append(rule(g, *[values[i] for i in idx]))
        return grads


class _SequenceOpNode(_OpNode):
    """A node whose op takes a sequence of tensors (cat, stack, einsum): one edge per element."""

    __slots__ = ()

    def apply(self, grad_outputs: list[Any], create_graph: bool) -> list[Any]:
        values = self.unpack_saved(create_graph) if self._saved else ()
        g = self._gradient(grad_outputs, values)
        (rule, slot, idx), = self._rules
        if rule is None or rule is NONDIFF:
            raise NotImplementedError(
                f"the derivative of '{self._spec.name}' with respect to '{slot}' is not implemented")
        grads = list(rule(g, *[values[i] for i in idx]))
        return [gi if edge is not None else None for gi, (edge, _) in zip(grads, self.next_functions)]


def _parameters(name: str, kernel: Callable[..., Any], rules: dict[str, Any]) -> tuple[tuple[str, ...],
                                                                                      tuple[Any, ...]]:
    if isinstance(kernel, np.ufunc):
        if len(rules) != kernel.nin:
            raise TypeError(f"defop('{name}'): ufunc {kernel.__name__} takes {kernel.nin} inputs; "
                            f"give one rule per input")
        return tuple(rules), (_REQUIRED,) * kernel.nin
    sig = inspect.signature(kernel).parameters.values()
    params = tuple(p.name for p in sig)
    defaults = tuple(_REQUIRED if p.default is inspect.Parameter.empty else p.default for p in sig)
    for slot in rules:
        if slot not in params:
            raise TypeError(f"defop('{name}'): rule keyword '{slot}' is not a parameter of the forward "
                            f"({', '.join(params)})")
    return params, defaults


def defop(name: str, kernel: Callable[..., Any], *, jvp: Any = None, sequence: str | None = None,
          multi_output: bool = False, view: bool = False, **rules: Any) -> Callable[..., Any]:
    """Register an op and return its public function.

    Args:
        name: the public name; the node class is named after it (``"mul"`` -> ``MulBackward0``).
        kernel: the forward on arrays; its parameter names are the op's (a ufunc takes the rule names).
        jvp: the forward-mode rule: ``LINEAR``, ``ELEMENTWISE`` or a function.
        sequence: the parameter that holds a sequence of tensors (``cat``'s ``tensors``), if any.
        multi_output: the kernel returns a tuple of arrays; rules get ``g`` as a tuple.
        view: the result shares memory with the first input when NumPy returns a view (reshape,
            transpose, basic indexing, ...); it then shares that input's version counter and base.
        **rules: one backward rule per tensor input, ``NONDIFF`` for tensor inputs without one.
    """
    if name in OPS:
        raise ValueError(f"op '{name}' is registered twice")
    params, defaults = _parameters(name, kernel, rules)
    spec = OpSpec(name, kernel, params, defaults, rules, sequence, multi_output, jvp)
    OPS[name] = spec
    make = _make_sequence_op if sequence else _make_op
    fn = make(spec)
    spec.plain = make(spec, checked=False)
    if view:
        fn, spec.plain = _as_view_op(spec, fn), _as_view_op(spec, spec.plain)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {name} (NumPy's {kernel.__name__})." if isinstance(kernel, np.ufunc)
                  else kernel.__doc__)
    fn.spec = spec  # type: ignore[attr-defined]
    return fn


def nondiff(name: str, kernel: Callable[..., Any], *tensor_params: str) -> Callable[..., Any]:
    """Register an op with no derivative (comparisons, argmax): its result never requires grad."""
    if isinstance(kernel, np.ufunc) and not tensor_params:
        tensor_params = ("x", "y")[:kernel.nin]
    return defop(name, kernel, **{p: NONDIFF for p in tensor_params or ("x",)})


def composite(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Register a public function written with ops (e.g. ``max`` with a dim returning values and
    indices). It becomes a Tensor method too when its first parameter is ``x``."""
    if fn.__name__ in OPS or fn.__name__ in COMPOSITES:
        raise ValueError(f"'{fn.__name__}' is registered twice")
    COMPOSITES[fn.__name__] = fn
    return fn


def tensor_method(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``Tensor.<name>`` when it takes other arguments than the function of that name,
    e.g. ``x.reshape(2, 3)`` beside ``reshape(x, (2, 3))``."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in METHODS:
            raise ValueError(f"Tensor.{name} is registered twice")
        METHODS[name] = fn
        return fn
    return register


def _make_op(spec: OpSpec, checked: bool = True) -> Callable[..., Any]:
    """The op's function; ``checked=False`` gives the variant that skips the dispatch check (for layers)."""
    from funcgrad.tensor import Tensor

    dispatch = DISPATCH

    kernel = spec.kernel
    n_params = len(spec.params)
    positions = spec.tensor_positions
    bind = spec.bind
    record = _recorder(spec)
    wrap = Tensor._wrap
    differentiable = spec.differentiable

    # unary and binary ops on (x[, y]) are the hottest path: plain parameters, no packing
    if spec.params == ("x",):
        def unary(x: Any) -> Any:
            if checked and dispatch.active:
                return dispatch.call_op(spec, spec.plain, (x,), {})
            if not isinstance(x, Tensor):
                return kernel(x)
            out = kernel(x.data)
            if x._requires_grad and differentiable and STATE.grad_enabled:
                return record((x,), out)
            return wrap(out)
        return unary

    if spec.params == ("x", "y"):
        def binary(x: Any, y: Any) -> Any:
            if checked and dispatch.active:
                return dispatch.call_op(spec, spec.plain, (x, y), {})
            if isinstance(x, Tensor):
                if isinstance(y, Tensor):
                    out = kernel(x.data, y.data)
                    requires_grad = x._requires_grad or y._requires_grad
                else:
                    out = kernel(x.data, y)
                    requires_grad = x._requires_grad
            elif isinstance(y, Tensor):
                out = kernel(x, y.data)
                requires_grad = y._requires_grad
            else:
                return kernel(x, y)
            if requires_grad and differentiable and STATE.grad_enabled:
                return record((x, y), out)
            return wrap(out)
        return binary

    def op(*args: Any, **kwargs: Any) -> Any:
        if checked and dispatch.active:
            return dispatch.call_op(spec, spec.plain, args, kwargs)
        if kwargs or len(args) != n_params:
            args = bind(args, kwargs)
        arrays = list(args)
        has_tensor = requires_grad = False
        for i in positions:
            a = args[i]
            if isinstance(a, Tensor):
                has_tensor = True
                arrays[i] = a.data
                if a._requires_grad:
                    requires_grad = True
        out = kernel(*arrays)
        if not has_tensor:
            return out
        if requires_grad and differentiable and STATE.grad_enabled:
            return record(args, out)
        return wrap(out)

    return op


def _make_sequence_op(spec: OpSpec, checked: bool = True) -> Callable[..., Any]:
    """As ``_make_op``, for ops whose tensors come as one sequence argument."""
    from funcgrad.tensor import Tensor

    dispatch = DISPATCH

    kernel = spec.kernel
    bind = spec.bind
    seq = spec.params.index(spec.sequence)  # type: ignore[arg-type]
    record = _recorder(spec)

    def op(*args: Any, **kwargs: Any) -> Any:
        if checked and dispatch.active:
            return dispatch.call_op(spec, spec.plain, args, kwargs)
        args = bind(args, kwargs)
        items = tuple(args[seq])
        if not items:
            raise ValueError(f"{spec.name}() expects a non-empty sequence of tensors")
        arrays = list(args)
        arrays[seq] = [a.data if isinstance(a, Tensor) else a for a in items]
        out = kernel(*arrays)
        if not any(isinstance(a, Tensor) for a in items):
            return out
        if STATE.grad_enabled and any(isinstance(a, Tensor) and a.requires_grad for a in items):
            return record(args[:seq] + (items,) + args[seq + 1:], out)
        return Tensor._wrap(out)

    return op


def _recorder(spec: OpSpec) -> Callable[[tuple[Any, ...], Any], Any]:
    """The slow half of an op call: build the node, save what the rules need, wrap the output."""
    from funcgrad.tensor import Tensor

    node_class = spec.node_class
    positions = spec.tensor_positions
    saved_positions = spec.saved_positions
    saved_users = spec.saved_users if not spec.sequence else ((),) * len(saved_positions)
    seq = spec.params.index(spec.sequence) if spec.sequence else -1
    multi = spec.multi_output
    new = object.__new__
    ndarray = np.ndarray

    def record(args: tuple[Any, ...], out: Any) -> Any:
        if multi:
            if not any(np.asarray(o).dtype.kind in "fc" for o in out):
                return tuple([Tensor._wrap(o) for o in out])
        elif out.dtype.kind not in "fc":
            return Tensor._wrap(out)  # integer or bool results carry no gradient
        node = new(node_class)
        node.sequence_nr = next_sequence_nr()
        node._hooks = None
        edges = []
        shapes = []
        for a in (args[seq] if seq >= 0 else [args[i] for i in positions]):
            if isinstance(a, Tensor) and a._requires_grad:
                fn = a.grad_fn
                edges.append((fn, a.output_nr) if fn is not None else (a._accumulator(), 0))
                d = a.data
                shapes.append((d.shape, d.dtype))
            else:
                edges.append(NO_EDGE)
                shapes.append(None)
        node.next_functions = tuple(edges)
        node._shapes = tuple(shapes)
        if multi:
            node._n_outputs = len(out)
            results = tuple([_output(o, node, i) for i, o in enumerate(out)])
        else:
            result = new(Tensor)
            result.data = out if type(out) is ndarray else np.asarray(out)
            result._requires_grad = True
            result.grad = result._extra = None
            result.grad_fn = node
            result.output_nr = 0
            result._version_counter = [0]
        if not saved_positions:
            node._saved = node._versions = ()
            return results if multi else result
        saved = []
        versions = []
        for p, users in zip(saved_positions, saved_users):
            for u in users:
                if edges[u] is not NO_EDGE:
                    break
            else:
                if users:  # only rules of inputs that need no gradient would read it
                    saved.append(None)
                    versions.append(None)
                    continue
            if p >= 0:
                value = args[p]
                saved.append(value)
                versions.append(value._version_counter[0] if isinstance(value, Tensor) else saved_version(value))
            elif p < -1:  # only the shape of an input (a tuple of shapes for a sequence input)
                source = args[-p - 2]
                saved.append(tuple([np.shape(e) for e in source]) if -p - 2 == seq else np.shape(source))
                versions.append(None)
            elif multi:
                value = tuple([SavedOutput(r.data, r._version_counter, i) for i, r in enumerate(results)])
                saved.append(value)
                versions.append(saved_version(value))
            else:  # the op's own output: its array, checked through its version counter (saved at 0)
                saved.append(result.data)
                versions.append(result._version_counter)
        node._saved = tuple(saved)
        node._versions = tuple(versions)
        return results if multi else result

    return record


def _output(out: Any, node: Node, output_nr: int) -> Any:
    from funcgrad.tensor import Tensor

    data = out if type(out) is np.ndarray else np.asarray(out)
    if data.dtype.kind not in "fc":
        return Tensor._wrap(data)
    return Tensor._from_node(data, node, output_nr, [0])


def _as_view_op(spec: OpSpec, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a view op so its Tensor result is marked as a view of its first argument."""
    from funcgrad.autograd.views import mark_view
    from funcgrad.tensor import Tensor

    def view_op(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        if isinstance(out, Tensor):
            source = args[0] if args else kwargs[spec.params[0]]
            if isinstance(source, Tensor):
                full = spec.bind(args, kwargs)
                mark_view(out, source, lambda base: spec.plain(base, *full[1:]))
        return out

    return view_op
