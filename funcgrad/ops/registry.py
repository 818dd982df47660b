"""The op table's registry: ``defop`` reads one table entry, checks it, and makes the op's public
function (``calls.py``) and its ``<Name>Backward0`` node class (``nodes.py``).

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

from funcgrad.ops.calls import as_view_op, make_op, make_sequence_op
from funcgrad.ops.nodes import node_class

__all__ = ["defop", "nondiff", "composite", "tensor_method", "allow_complex", "NONDIFF", "LINEAR", "ELEMENTWISE",
           "OPS", "COMPOSITES", "METHODS", "SIGNATURES", "torch_signature", "OpSpec"]


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

OPS: dict[str, OpSpec] = {}
COMPOSITES: dict[str, Callable[..., Any]] = {}  # public functions built from ops, not table entries
# NumPy's spellings of op keywords, accepted beside PyTorch's (``x.sum(axis=0, keepdims=True)``)
NUMPY_KEYWORDS = {"axis": ("dim", "dims"), "keepdims": ("keepdim",), "ddof": ("correction",)}
METHODS: dict[str, Callable[..., Any]] = {}     # Tensor methods whose signature differs from the function's
# torch's full signatures of table ops (add's alpha, div's rounding_mode, ...): the public function and method
SIGNATURES: dict[str, Callable[..., Any]] = {}


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
        self.complex = False  # its rules hold for complex values (set by allow_complex)
        self.taylor: Callable[..., Any] | None = None  # the Taylor-mode rule, from ops/taylor.py
        self.plain: Callable[..., Any] = kernel  # the op function without the dispatch check, set by defop
        # parameters up to the last one without a default must be given
        self.n_required = max((i + 1 for i, d in enumerate(defaults) if d is _REQUIRED), default=0)
        # where each keyword goes: the parameter names, then NumPy's spellings of them (``axis`` for ``dim``)
        self.positions = {numpy: params.index(name) for numpy, names in NUMPY_KEYWORDS.items()
                          for name in reversed(names) if name in params}
        self.positions.update((name, i) for i, name in enumerate(params))
        self.tensor_positions = tuple(params.index(p) for p in rules)
        self.differentiable = any(r is not NONDIFF for r in rules.values())
        # its tensor inputs broadcast together (torch's error when they cannot)
        self.elementwise = isinstance(kernel, np.ufunc) or jvp is ELEMENTWISE
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
            bound.append((rule, slot, tuple(wanted.index(n) for n in names)))  # type: ignore[arg-type]
        self.saved_names = tuple(wanted)
        # for each saved name, the inputs whose rules use it: saved only when one of them needs a grad
        self.saved_users = tuple(tuple(k for k, (rule, _, idx) in enumerate(bound) if i in idx)
                                 for i in range(len(wanted)))
        self.out_index = wanted.index("out") if "out" in wanted else -1
        self.saved_positions = tuple(_saved_position(n, params) for n in wanted)
        self.node_class = node_class(self, tuple(bound))

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Arguments as a full positional tuple, defaults filled in; TypeError as Python would say."""
        n = len(self.params)
        if not kwargs and self.n_required <= len(args) <= n:
            return args + self.defaults[len(args):]  # positional, the rest defaulted: the common call
        if len(args) > n:
            raise TypeError(f"{self.name}() takes {n} arguments but {len(args)} were given")
        values = list(args) + list(self.defaults[len(args):])
        positions = self.positions
        for key, value in kwargs.items():
            i = positions.get(key, -1)
            if i < 0:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'")
            if i < len(args):
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
            values[i] = value
        if len(args) < self.n_required:
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


def _signature(params: tuple[str, ...], defaults: tuple[Any, ...]) -> inspect.Signature:
    """The op's public signature: the forward's parameters, with their defaults."""
    return inspect.Signature([inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                default=inspect.Parameter.empty if d is _REQUIRED else d)
                              for p, d in zip(params, defaults)])


def defop(name: str, kernel: Callable[..., Any], *, jvp: Any = None, sequence: str | None = None,
          multi_output: bool = False, view: bool = False, **rules: Any) -> Callable[..., Any]:
    """Register an op and return its public function.

    Args:
        name: the public name; the node class is named after it (``"mul"`` -> ``MulBackward0``).
        kernel: the forward on arrays; its parameter names are the op's (a ufunc takes the rule names).
        jvp: the forward-mode rule: ``LINEAR``, ``ELEMENTWISE`` or a function.
        sequence: the parameter that holds a sequence of tensors (``cat``'s ``tensors``), if any.
        multi_output: the kernel returns a tuple of arrays; rules get ``g`` as a tuple, with None for
            each output that received no gradient.
        view: the result shares memory with the first input when NumPy returns a view (reshape,
            transpose, basic indexing, ...); it then shares that input's version counter and base.
        **rules: one backward rule per tensor input, ``NONDIFF`` for tensor inputs without one.
    """
    if name in OPS:
        raise ValueError(f"op '{name}' is registered twice")
    params, defaults = _parameters(name, kernel, rules)
    spec = OpSpec(name, kernel, params, defaults, rules, sequence, multi_output, jvp)
    OPS[name] = spec
    make = make_sequence_op if sequence else make_op
    fn = make(spec)
    spec.plain = make(spec, checked=False)
    if view:
        fn, spec.plain = as_view_op(spec, fn), as_view_op(spec, spec.plain)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {name} (NumPy's {kernel.__name__})." if isinstance(kernel, np.ufunc)
                  else kernel.__doc__)
    fn.__signature__ = _signature(params, defaults)  # type: ignore[attr-defined]  # what help() shows
    fn.spec = spec  # type: ignore[attr-defined]
    return fn


def nondiff(name: str, kernel: Callable[..., Any], *tensor_params: str) -> Callable[..., Any]:
    """Register an op with no derivative (comparisons, argmax): its result never requires grad."""
    if isinstance(kernel, np.ufunc) and not tensor_params:
        tensor_params = ("x", "y")[:kernel.nin]
    return defop(name, kernel, **{p: NONDIFF for p in tensor_params or ("x",)})  # type: ignore[arg-type]


def composite(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Register a public function written with ops (e.g. ``max`` with a dim returning values and
    indices). It becomes a Tensor method too when its first parameter is ``x``."""
    if fn.__name__ in OPS or fn.__name__ in COMPOSITES:
        raise ValueError(f"'{fn.__name__}' is registered twice")
    COMPOSITES[fn.__name__] = fn
    return fn


def allow_complex(*ops: Callable[..., Any]) -> None:
    """Declare that the rules of ``ops`` hold for complex values, with PyTorch's convention (the gradient of
    a real loss is its conjugate Wirtinger derivative: ``g * conj(f'(z))`` for holomorphic ``f``). Any other
    op refuses to record a gradient for complex values rather than give a wrong one."""
    for op in ops:
        op.spec.complex = True  # type: ignore[attr-defined]


def tensor_method(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``Tensor.<name>`` when it takes other arguments than the function of that name,
    e.g. ``x.reshape(2, 3)`` beside ``reshape(x, (2, 3))``."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in METHODS:
            raise ValueError(f"Tensor.{name} is registered twice")
        METHODS[name] = fn
        return fn
    return register




def torch_signature(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as torch's full signature of the table op ``name`` (keywords its entry does not take, such as
    add's ``alpha``): ``fn`` becomes ``funcgrad.<name>``, ``Tensor.<name>`` and the function of ``Tensor.<name>_``,
    while ``funcgrad.ops.<name>`` stays the table's op (the one rules call, without the keyword handling)."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name not in OPS or name in SIGNATURES:
            raise ValueError(f"torch_signature('{name}'): not a table op, or registered twice")
        SIGNATURES[name] = fn
        return fn
    return register
