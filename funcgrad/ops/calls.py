"""The call path of table ops: the public function that runs the kernel, and the recorder that builds
the node, saves what the rules name and wraps the outputs, only when an input requires grad.

Unary and binary ops on ``(x[, y])`` get functions with plain parameters: the hottest path in the
library, where argument packing alone would cost a tenth of an op.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.grad_mode import STATE
from funcgrad.core.graph import (
    AT_VERSION_0,
    NO_EDGE,
    SHAPES,
    UNCHECKED_PAIR,
    Node,
    SavedOutput,
    edge_to,
    next_sequence_nr,
    saved_version,
    unchecked,
)
from funcgrad.core.structured import Structured
from funcgrad.core.tensor import Tensor
from funcgrad.core.views import CreationMeta, mark_view

if TYPE_CHECKING:
    from funcgrad.ops.registry import OpSpec



def make_op(spec: OpSpec, checked: bool = True) -> Callable[..., Any]:
    """The op's function; ``checked=False`` gives the variant that skips the dispatch check (for layers)."""
    dispatch = DISPATCH

    kernel = spec.kernel
    n_params = len(spec.params)
    positions = spec.tensor_positions
    bind = spec.bind
    record = _recorder(spec)
    wrap = Tensor._wrap
    differentiable = spec.differentiable
    multi_output = spec.multi_output
    elementwise = spec.elementwise

    # unary and binary ops on (x[, y]) are the hottest path: plain parameters, no packing
    if spec.params == ("x",):
        return _unary_op(spec, checked, record)
    if len(spec.params) == 2 and spec.tensor_positions == (0, 1) and not spec.sequence and not multi_output:
        return _named(_binary_op(spec, checked, record), spec.params)  # (mul; tanh_backward(grad_output, output))
    if spec.tensor_positions == (0,) and not spec.sequence and not multi_output:
        return _named(_input_and_options_op(spec, checked, record), spec.params[:1])  # (sum(x, dim, keepdim))

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
        try:
            out = kernel(*arrays)
        except ValueError:
            if elementwise:
                check_broadcast([arrays[i] for i in positions])
            raise
        if not has_tensor:
            return out
        if requires_grad and differentiable and STATE.grad_enabled:
            return record(args, out)
        return tuple([wrap(o) for o in out]) if multi_output else wrap(out)

    return op


def _unary_op(spec: OpSpec, checked: bool, record: Callable[[tuple[Any, ...], Any], Any]) -> Callable[[Any], Any]:
    """The function of an op on ``(x)``. Its common recording (real floats in and out; the rule reading the
    input, the output or nothing) is done in place: no recorder call, no argument tuple. Anything else goes
    to ``record``."""
    dispatch = DISPATCH
    kernel = spec.kernel
    wrap = Tensor._wrap
    differentiable = spec.differentiable
    node_class = spec.node_class
    saves_input = spec.saved_positions == (0,)  # e.g. sin, log
    saves_output = spec.saved_positions == (-1,)  # e.g. exp, tanh
    inline = saves_input or saves_output or not spec.saved_positions
    new = object.__new__
    ndarray = np.ndarray
    shapes = SHAPES.setdefault

    def unary(x: Any) -> Any:
        if checked and dispatch.active:
            return dispatch.call_op(spec, spec.plain, (x,), {})
        if not isinstance(x, Tensor):
            return kernel(x)
        data = x.data
        out = kernel(data)
        if not (x._requires_grad and differentiable and STATE.grad_enabled):
            return wrap(out)
        if not inline or type(out) is not ndarray or out.dtype.kind != "f" or data.dtype.kind != "f":
            return record((x,), out)
        node = new(node_class)
        node.sequence_nr = next_sequence_nr()
        node._hooks = None
        shape = data.shape  # (edge_to, inline)
        fn = x.grad_fn
        node._edges = ((fn, x.output_nr, shapes(shape, shape), data.dtype) if fn is not None
                       else (x._accumulator(), 0, shapes(shape, shape), data.dtype),)
        result = new(Tensor)  # (Tensor._from_node, inline)
        result.data, result.grad_fn, result.output_nr = out, node, 0
        result._requires_grad, result._grad, result._extra = True, None, None
        result._version_counter = counter = [0]
        if saves_input:
            node._saved = (x,)
            version = x._version_counter[0]
            node._versions = (version,) if version else AT_VERSION_0  # (shared: one object less to collect)
        elif saves_output:
            node._saved = (out,)
            node._versions = (counter,)
        else:
            node._saved = node._versions = ()
        return result

    return unary


def _binary_op(spec: OpSpec, checked: bool, record: Callable[[tuple[Any, ...], Any], Any]) -> Callable[[Any, Any], Any]:
    """The function of an op on ``(x, y)``, either of which may be a Tensor. Its recording of a real float result
    is done in place, the commonest savings (nothing, as add's; each rule the other input, as mul's) without a
    loop. Other results (integers, complex, structured) go to ``record``."""
    dispatch = DISPATCH
    kernel = spec.kernel
    wrap = Tensor._wrap
    differentiable = spec.differentiable
    node_class = spec.node_class
    real_only = not spec.complex
    elementwise = spec.elementwise
    plan = _plan(spec, check_all=False)
    # two saved inputs (mul: y for x's rule, x for y's; tanh_backward: output for both, grad_output for output's)
    two_inputs = len(plan) == 2 and all(p in (0, 1) and tensor for p, _, tensor in plan)
    (first, first_users, _), (second, second_users, _) = plan if two_inputs else ((0, 0, False),) * 2
    new = object.__new__
    ndarray = np.ndarray
    shapes = SHAPES.setdefault

    def binary(x: Any, y: Any) -> Any:
        if checked and dispatch.active:
            return dispatch.call_op(spec, spec.plain, (x, y), {})
        try:  # (free unless it catches: NumPy's error becomes torch's only when there is one)
            if isinstance(x, Tensor):
                if isinstance(y, Tensor):
                    out = kernel(x.data, y.data)
                    grad_x, grad_y = x._requires_grad, y._requires_grad
                else:
                    out = kernel(x.data, y)
                    grad_x, grad_y = x._requires_grad, False
            elif isinstance(y, Tensor):
                out = kernel(x, y.data)
                grad_x, grad_y = False, y._requires_grad
            else:
                return kernel(x, y)
        except ValueError:
            if elementwise:
                check_broadcast([x, y])
            raise
        if not ((grad_x or grad_y) and differentiable and STATE.grad_enabled):
            return wrap(out)
        if type(out) is not ndarray or out.dtype.kind != "f":
            return record((x, y), out)
        node = new(node_class)
        node.sequence_nr = next_sequence_nr()
        node._hooks = None
        # the edges (edge_to, inline: a call each costs a tenth of the recording)
        edge_x = edge_y = NO_EDGE
        if grad_x:
            fn, data = x.grad_fn, x.data
            shape, dtype_x = shapes(s := data.shape, s), data.dtype
            edge_x = (fn, x.output_nr, shape, dtype_x) if fn is not None else (x._accumulator(), 0, shape, dtype_x)
        if grad_y:
            fn, data = y.grad_fn, y.data
            shape, dtype_y = shapes(s := data.shape, s), data.dtype
            edge_y = (fn, y.output_nr, shape, dtype_y) if fn is not None else (y._accumulator(), 0, shape, dtype_y)
        node._edges = (edge_x, edge_y)
        if real_only and (grad_x and dtype_x.kind == "c" or grad_y and dtype_y.kind == "c"):
            refuse_complex(spec, (x, y), out)
        result = new(Tensor)  # (Tensor._from_node, inline)
        result.data, result.grad_fn, result.output_nr = out, node, 0
        result._requires_grad, result._grad, result._extra = True, None, None
        result._version_counter = counter = [0]
        if two_inputs:  # (a value only rules of inputs needing no gradient read is not kept)
            needing = grad_x | grad_y << 1
            a = (y if first else x) if first_users & needing else None
            b = (y if second else x) if second_users & needing else None
            node._saved = (a, b)
            version_a = (a._version_counter[0] if isinstance(a, Tensor) else
                         None if a is None or a.__class__ is float else _version(a))
            version_b = (b._version_counter[0] if isinstance(b, Tensor) else
                         None if b is None or b.__class__ is float else _version(b))
            node._versions = UNCHECKED_PAIR if version_a is None and version_b is None else (version_a, version_b)
        elif not plan:
            node._saved = node._versions = ()
        else:  # (pow...: the general saving, still without the recorder's call)
            needing = grad_x | grad_y << 1
            node._saved, node._versions = _saved(plan, (x, y), needing, out, counter)
        return result

    return binary


def _input_and_options_op(spec: OpSpec, checked: bool,
                          record: Callable[[tuple[Any, ...], Any], Any]) -> Callable[..., Any]:
    """The function of an op on one tensor and options that are no tensor inputs (``sum(x, dim, keepdim)``,
    ``reshape(x, shape)``). Its common recording (real floats in and out, saving nothing or the input's shape and
    the options after it) is done in place, as a unary op's; anything else goes to ``record``."""
    dispatch = DISPATCH
    kernel = spec.kernel
    wrap = Tensor._wrap
    differentiable = spec.differentiable
    node_class = spec.node_class
    bind = spec.bind
    n_options = len(spec.params) - 1
    n_required, defaulted = spec.n_required - 1, spec.defaults[1:]  # (options past the given ones: defaults)
    plan = _plan(spec, check_all=False)
    n_saved_options = len(plan) - 1
    saves_shape_then_options = all(p == i - 2 if i == 0 else p == i and not tensor
                                   for i, (p, _, tensor) in enumerate(plan))
    inline = not plan or saves_shape_then_options
    no_checks = unchecked(len(plan))
    new = object.__new__
    ndarray = np.ndarray
    shapes = SHAPES.setdefault

    def op(x: Any, *options: Any, **kwargs: Any) -> Any:
        if checked and dispatch.active:
            return dispatch.call_op(spec, spec.plain, (x, *options), kwargs)
        if len(options) != n_options or kwargs:
            options = (options + defaulted[len(options):] if not kwargs and n_required <= len(options) < n_options
                       else bind((x, *options), kwargs)[1:])
        if not isinstance(x, Tensor):
            return kernel(x, *options)
        data = x.data
        out = kernel(data, *options)
        if not (x._requires_grad and differentiable and STATE.grad_enabled):
            return wrap(out)
        if type(out) is not ndarray and isinstance(out, np.floating):
            out = np.asarray(out)  # (a full reduction's NumPy scalar)
        if not inline or type(out) is not ndarray or out.dtype.kind != "f" or data.dtype.kind != "f":
            return record((x, *options), out)
        node = new(node_class)
        node.sequence_nr = next_sequence_nr()
        node._hooks = None
        shape = shapes(s := data.shape, s)  # (edge_to, inline)
        fn = x.grad_fn
        node._edges = ((fn, x.output_nr, shape, data.dtype) if fn is not None
                       else (x._accumulator(), 0, shape, data.dtype),)
        result = new(Tensor)  # (Tensor._from_node, inline)
        result.data, result.grad_fn, result.output_nr = out, node, 0
        result._requires_grad, result._grad, result._extra = True, None, None
        result._version_counter = [0]
        if plan:
            node._saved = (shape, *_read_all(options if n_saved_options == n_options else options[:n_saved_options]))
            node._versions = no_checks
        else:
            node._saved = node._versions = ()
        return result

    return op


def _named(function: Callable[..., Any], params: tuple[str, ...]) -> Callable[..., Any]:
    """``function`` with its leading parameters renamed to ``params``, so the op takes its own keywords
    (``tanh_backward(grad_output=g, output=y)``) with no packing of arguments on the positional path."""
    code = function.__code__
    function.__code__ = code.replace(co_varnames=params + code.co_varnames[len(params):])
    return function


def make_sequence_op(spec: OpSpec, checked: bool = True) -> Callable[..., Any]:
    """As ``_make_op``, for ops whose tensors come as one sequence argument."""
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
    return _sequence_or_multi_recorder(spec) if spec.sequence or spec.multi_output else _simple_recorder(spec)


def _simple_recorder(spec: OpSpec) -> Callable[[tuple[Any, ...], Any], Any]:
    """``_recorder`` of an op with one output and its tensors as separate arguments (nearly every op; ops on
    ``(x)`` and ``(x, y)`` record their common cases themselves, see ``_unary_op``). An op with one or two
    tensor inputs builds its edges without loops or lists, and saving nothing, or only arguments that are no
    tensors and input shapes (sum, reshape, expand...), takes no loop either."""
    node_class = spec.node_class
    positions = spec.tensor_positions
    one = len(positions) == 1
    first = positions[0] if positions else 0
    pair = len(positions) == 2
    second = positions[1] if pair else 0
    # per saved value: its position (see OpSpec.saved_positions), the inputs whose rules read it, and
    # whether it may be a Tensor (a tensor input's value) whose version a backward must check
    plan = _plan(spec, check_all=False)
    saves_shapes = one and bool(plan) and all(p < -1 or p >= 0 and not tensor for p, _, tensor in plan)
    fetch = tuple(p for p, _, _ in plan)
    # the commonest such saving: the input's shape, then the arguments after it, in order (sum, mean, reshape)
    shape_then_rest = saves_shapes and fetch == (-first - 2, *range(first + 1, first + len(fetch)))
    rest = slice(first + 1, first + len(fetch))
    no_checks = unchecked(len(plan))  # (shared by every node: see nodes._unary_apply)
    new = object.__new__

    def record(args: tuple[Any, ...], out: Any) -> Any:
        kind = out.dtype.kind
        if kind != "f" and (kind != "c" or not spec.complex):
            if kind != "c":
                return Tensor._wrap(out)  # integer or bool results carry no gradient
            refuse_complex(spec, args, out)
        node = new(node_class)
        node.sequence_nr = next_sequence_nr()
        node._hooks = None
        edges: tuple[tuple[Any, ...], ...]
        if one:
            node._edges = edges = (edge_to(args[first]),)
            needing = 1
            complex_input = edges[0][3].kind == "c"
        elif pair:
            a, b = args[first], args[second]
            edges = (edge_to(a) if isinstance(a, Tensor) and a._requires_grad else NO_EDGE,
                     edge_to(b) if isinstance(b, Tensor) and b._requires_grad else NO_EDGE)
            node._edges = edges
            needing = (edges[0] is not NO_EDGE) | (edges[1] is not NO_EDGE) << 1
            complex_input = (edges[0][3] is not None and edges[0][3].kind == "c"
                             or edges[1][3] is not None and edges[1][3].kind == "c")
        else:
            node._edges = edges = _edges([args[i] for i in positions])
            needing = _needing(edges)
            complex_input = _has_complex(edges)
        if complex_input and not spec.complex:
            refuse_complex(spec, args, out)
        data = out if type(out) is np.ndarray or isinstance(out, Structured) else np.asarray(out)
        result = Tensor._from_node(data, node, 0, [0])
        if not plan:
            node._saved = node._versions = ()
        elif shape_then_rest:
            node._saved = (args[first].data.shape, *_read_all(args[rest]))
            node._versions = no_checks
        elif saves_shapes:
            node._saved = tuple([(a if (a := args[p]).__class__ in _PLAIN else read_now(a)) if p >= 0
                                 else _shape(args[-p - 2]) for p in fetch])
            node._versions = no_checks
        else:
            node._saved, node._versions = _saved(plan, args, needing, data, result._version_counter)
        return result

    return record


def _edges(inputs: Sequence[Any]) -> tuple[tuple[Any, ...], ...]:
    """The edges of a node whose op reads ``inputs``: NO_EDGE for one that is no Tensor requiring grad."""
    return tuple([edge_to(a) if isinstance(a, Tensor) and a._requires_grad else NO_EDGE for a in inputs])


# Arguments that are no tensor inputs but may hold Tensors whose later in-place change would make the rule read
# wrong values: an index (``x[i]`` with a Tensor ``i``, as torch checks its version too).
_HOLDS_TENSORS = frozenset({"index"})


def _plan(spec: OpSpec, check_all: bool) -> tuple[tuple[int, int, bool], ...]:
    """How a node of ``spec`` saves: per saved value, its position (see ``OpSpec.saved_positions``), a bit mask of
    the inputs whose rules read it (bit i: input i; all bits when any input's rule might), and whether it may be
    or hold a Tensor whose version a backward must check (every value, with ``check_all``)."""
    positions = spec.tensor_positions
    users = spec.saved_users if not spec.sequence else ((),) * len(spec.saved_positions)  # (edges per element)
    return tuple((p, sum(1 << u for u in used) if used else -1,
                  check_all or p in positions or p >= 0 and spec.params[p] in _HOLDS_TENSORS)
                 for p, used in zip(spec.saved_positions, users))


def _needing(edges: tuple[tuple[Any, ...], ...]) -> int:
    """A bit mask of the inputs that need a gradient (bit i: edge i is not NO_EDGE)."""
    return sum(1 << i for i, edge in enumerate(edges) if edge[0] is not None)


def _saved(plan: tuple[tuple[int, int, bool], ...], args: tuple[Any, ...], needing: int, output: Any,
           counter: Any, seq: int = -1, outputs: tuple[Any, ...] | None = None) -> tuple[tuple[Any, ...], ...]:
    """What a node saves (by ``plan``, see ``_plan``) and the versions to check it against. A value only the
    rules of inputs without a gradient would read (none of its users in the ``needing`` mask) is not kept
    (None). ``seq``: the position of a sequence of tensors (its shape is saved as a tuple of shapes);
    ``outputs``: the result Tensors of an op with several (saved as a tuple of ``SavedOutput``)."""
    saved: list[Any] = []
    versions: list[Any] = []
    for p, users, tensor in plan:
        if not users & needing:  # only rules of inputs that need no gradient would read it
            saved.append(None)
            versions.append(None)
            continue
        if p >= 0:
            value = args[p]
            if not tensor:  # dim, keepdim, an offset...: what the call read (a number given as a 0-d Tensor too)
                saved.append(value if value.__class__ in _PLAIN else read_now(value))
                versions.append(None)
                continue
            saved.append(value)
            if isinstance(value, Tensor):
                versions.append(value._version_counter[0])
            else:
                versions.append(_version(value))
        elif p < -1:  # only the shape of an input (a tuple of shapes for a sequence input)
            source = args[-p - 2]
            saved.append(tuple([_shape(e) for e in source]) if -p - 2 == seq else _shape(source))
            versions.append(None)
        elif outputs is not None:
            value = tuple([SavedOutput(r.data, r._version_counter, i) for i, r in enumerate(outputs)])
            saved.append(value)
            versions.append(saved_version(value))
        else:  # the op's own output: its array, checked through its version counter (saved at 0)
            saved.append(output)
            versions.append(counter)
    return tuple(saved), tuple(versions)


def _sequence_or_multi_recorder(spec: OpSpec) -> Callable[[tuple[Any, ...], Any], Any]:
    """``_recorder`` of an op taking a sequence of tensors (cat, stack, einsum) or giving several outputs."""
    node_class = spec.node_class
    positions = spec.tensor_positions
    saved_positions = spec.saved_positions
    plan = _plan(spec, check_all=True)
    seq = spec.params.index(spec.sequence) if spec.sequence else -1
    multi = spec.multi_output
    several, first = len(positions) > 1, positions[0] if positions else 0  # one tensor input: no list to build
    new = object.__new__
    ndarray = np.ndarray

    def record(args: tuple[Any, ...], out: Any) -> Any:
        if multi:
            if not any(np.result_type(o).kind in "fc" for o in out):
                return tuple([Tensor._wrap(o) for o in out])
        elif out.dtype.kind not in "fc":
            return Tensor._wrap(out)  # integer or bool results carry no gradient
        if not spec.complex:
            refuse_complex(spec, args, out)
        node = new(node_class)
        node.sequence_nr = next_sequence_nr()
        node._hooks = None
        if several or seq >= 0:
            node._edges = edges = _edges(args[seq] if seq >= 0 else [args[i] for i in positions])
        else:  # one tensor input, which requires grad (else nothing is recorded)
            node._edges = edges = (edge_to(args[first]),)
        if multi:
            node._n_outputs = len(out)  # type: ignore[misc]
            results = tuple([_output(o, node, i) for i, o in enumerate(out)])
        else:
            data = out if type(out) is ndarray or isinstance(out, Structured) else np.asarray(out)
            result = Tensor._from_node(data, node, 0, [0])
        if not saved_positions:
            node._saved = node._versions = ()
            return results if multi else result
        needing = _needing(edges)
        if multi:
            node._saved, node._versions = _saved(plan, args, needing, None, None, seq, results)
        else:
            node._saved, node._versions = _saved(plan, args, needing, result.data, result._version_counter, seq)
        return results if multi else result

    return record


def _shape(value: Any) -> tuple[int, ...]:
    """The shape of an op argument (a Tensor's read directly: ``np.shape`` would dispatch back to funcgrad)."""
    return value.data.shape if isinstance(value, Tensor) else np.shape(value)


_PLAIN = frozenset({int, float, bool, str, type(None)})  # argument types that hold no Tensor


def read_now(value: Any) -> Any:
    """An argument that is no tensor input as the op's call reads it: a Tensor given for a number (torch takes a
    0-d one for a dim or an offset) as its value, in a tuple or list too; anything else as it is. A rule or a view
    function that uses it later then sees the call's value, not the Tensor as an in-place change left it."""
    kind = value.__class__
    if kind is tuple or kind is list:
        for v in value:
            if v.__class__ not in _PLAIN:  # (a Tensor, or a nested sequence, inside)
                return kind([read_now(e) for e in value])
        return value
    return value.data.tolist() if isinstance(value, Tensor) else value


def _read_all(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """``read_now`` of each value; ``values`` itself when none is or holds a Tensor (numbers, tuples of numbers)."""
    for v in values:
        kind = v.__class__
        if kind in _PLAIN:
            continue
        if kind is tuple:
            for e in v:
                if e.__class__ not in _PLAIN:
                    return tuple([read_now(e) for e in values])
            continue
        return tuple([read_now(e) for e in values])
    return values


def _version(value: Any) -> Any:
    """The version to check a saved non-Tensor value against (None for numbers, arrays and None)."""
    return None if value.__class__ in _PLAIN else saved_version(value)


class BroadcastError(RuntimeError, ValueError):
    """Operands of an elementwise op whose shapes do not broadcast: torch's RuntimeError, and a ValueError as
    NumPy's error is, so code written for either catches it."""


def check_broadcast(operands: Sequence[Any]) -> None:
    """Raise torch's error, naming the first mismatch from the right, if the operands' shapes do not broadcast;
    torch broadcasts them left to right, so "tensor a" is the shape of those before the one that fails."""
    shape, *others = [np.shape(a.data if isinstance(a, Tensor) else a) for a in operands]
    for other in others:
        ndim = max(len(shape), len(other))
        a, b = (1,) * (ndim - len(shape)) + shape, (1,) * (ndim - len(other)) + other
        for dim in reversed(range(ndim)):
            if a[dim] != b[dim] and a[dim] != 1 and b[dim] != 1:
                raise BroadcastError(f"The size of tensor a ({a[dim]}) must match the size of tensor b ({b[dim]}) at "
                                     f"non-singleton dimension {dim}")
        shape = tuple(max(m, n) if min(m, n) else 0 for m, n in zip(a, b))


def _has_complex(edges: tuple[tuple[Any, ...], ...]) -> bool:
    """Whether an input that requires grad (an edge that is not NO_EDGE) is complex. With a real output, only
    such an input can make a real-only op's gradient complex."""
    return any(edge[0] is not None and edge[3].kind == "c" for edge in edges)


def refuse_complex(spec: OpSpec, args: tuple[Any, ...], out: Any, tangents: Any = ()) -> None:
    """Raise if an op whose rules are not known to hold for complex values would differentiate one
    (``args`` bound in full, ``out`` the result, ``tangents`` forward mode's input tangents)."""
    values = (list(out) if spec.multi_output else [out]) + list(tangents)
    for i in spec.tensor_positions:
        values.extend(args[i] if spec.sequence and i == spec.params.index(spec.sequence) else [args[i]])
    if any(isinstance(v, complex) or getattr(getattr(v, "dtype", None), "kind", "") == "c" for v in values):
        raise RuntimeError(f"{spec.name}: the derivative for complex values is not implemented; differentiate "
                           "a real-valued formulation (e.g. of .real and .imag) instead")


def _output(out: Any, node: Node, output_nr: int) -> Any:
    data = out if type(out) is np.ndarray or isinstance(out, Structured) else np.asarray(out)
    if data.dtype.kind not in "fc":
        return Tensor._wrap(data)
    return Tensor._from_node(data, node, output_nr, [0])  # type: ignore[arg-type]


def as_view_op(spec: OpSpec, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a view op so its Tensor result is marked as a view of its first argument (each result of an op
    returning several views, as such: PyTorch forbids writing those in place)."""
    def view_op(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        several = type(out) is tuple and out and isinstance(out[0], Tensor)
        if isinstance(out, Tensor) or several:
            source = args[0] if args else kwargs[spec.params[0]]
            if isinstance(source, Tensor):
                # the arguments as the call read them (a number given as a Tensor is read now, as torch does:
                # the view function replays the call when the base changes in place, maybe after that Tensor did)
                rest = _read_all(args[1:])
                given = {key: read_now(value) for key, value in kwargs.items()} if kwargs else kwargs
                if several:
                    for i, piece in enumerate(out):
                        mark_view(piece, source, partial(_piece, spec, rest, given, i), CreationMeta.MULTI_OUTPUT_NODE)
                else:
                    mark_view(out, source, lambda base: spec.plain(base, *rest, **given))
        return out

    return view_op


def _piece(spec: OpSpec, rest: tuple[Any, ...], given: dict[str, Any], i: int, base: Any) -> Any:
    """Result ``i`` of the multi-output view op ``spec`` applied to ``base``: that view's view function."""
    return spec.plain(base, *rest, **given)[i]
