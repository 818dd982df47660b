"""Forward-mode AD through the op table: the dispatch layer of a dual level, which gives the output of
every op whose inputs carry tangents the tangent the op's JVP rule computes.

- ``ELEMENTWISE``: the sum over inputs of the VJP rules with the tangent as ``g`` (right because
  each partial Jacobian of an elementwise op is diagonal);
- ``LINEAR``: the op itself applied to the tangents (zeros for inputs without one);
- a function ``jvp=lambda x_t, y_t, x, y, out: ...`` naming tangents as ``<input>_t`` (zeros when an
  input has none, or None when the rule declares ``<input>_t=None`` and skips that term; a list for a
  sequence input) and anything else as a VJP rule may.

A tangent may carry one leading batch dimension (a batch of directions, pushed in one pass). Only
some inputs' tangents may have it (the zeros given for inputs without a tangent never do), so an
explicit rule addresses dims from the end and keeps the batch in front (``formulas.align``). JVP
rules run with tangent propagation off, on Tensors, so they record a reverse-mode graph when grad
mode is on: reverse-over-forward and forward-over-reverse both work.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import ops
from funcgrad.core import dispatch
from funcgrad.core.grad_mode import STATE
from funcgrad.core.graph import FREED, SavedOutput
from funcgrad.core.structured import Structured
from funcgrad.core.tangents import DualLevel, carry_tangent, tangent_of, tangents_of
from funcgrad.core.tensor import Tensor
from funcgrad.ops.calls import refuse_complex
from funcgrad.ops.formulas import align, is_complex
from funcgrad.ops.registry import ELEMENTWISE, LINEAR, NONDIFF, OpSpec

__all__ = ["ForwardLayer", "saved_dual", "dense", "zeros_like", "inplace_tangent"]


class ForwardLayer(DualLevel):
    """The dispatch layer of a dual level: computes output tangents. Backward passes run their rules on
    Tensors meanwhile (recording nothing unless ``create_graph``), so gradients computed from values
    that carry tangents carry theirs: forward-over-reverse needs no recorded second graph.

    A rule runs on the arrays themselves, not on Tensors, when no one could see the difference: this is
    the outermost level (no earlier level needs the tangents of the rule's ops), no layer other than
    dual levels is installed (a profiler sees a rule's ops), and nothing would be recorded (grad mode
    is off, nothing the rule reads requires grad, or the level's tangents are not recorded: ``record``)."""

    def op(self, spec: OpSpec, proceed: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = proceed(args, kwargs)
        if self.quiet:
            return out
        plan = _PLANS.get(spec) or _plan(spec)
        full = args if not kwargs and len(args) == plan.n_params else spec.bind(args, kwargs)
        if plan.elementwise and self._elementwise_on_arrays(plan, full, out):
            return out
        if plan.sequence is not None:
            tangents = _sequence_tangents(spec, full, self)
            if tangents is None:
                return out
        else:  # one lookup per tensor input, inline: this runs for every op of a forward-mode pass
            tangents = []
            found = False
            for p in plan.inputs:
                t = None
                if p >= 0:
                    a = full[p]
                    if isinstance(a, Tensor):
                        extra = a._extra
                        if extra is not None and extra.tangents:
                            t = extra.tangents.get(self)
                            if t is not None:
                                found = True
                tangents.append(t)
            if not found:
                return out
        if not spec.complex:
            refuse_complex(spec, full, out, tangents)
        token = dispatch.hide(self.and_later())  # the rule's ops: seen by earlier levels only
        try:
            if not self.depth and not dispatch.DISPATCH.layers and self._on_arrays(plan, full, tangents):
                tangent = _jvp_on_arrays(spec, full, out, tangents)
            else:
                tangent = _jvp(spec, full, out, tangents)
        finally:
            dispatch.restore(token)
        if spec.multi_output:
            for o, t in zip(out, tangent):
                if t is not None and isinstance(o, Tensor) and o.dtype.kind in "fc":
                    self.attach(o, t)
            _save_with_tangents(out)
        elif tangent is not None and isinstance(out, Tensor) and out.data.dtype.kind in "fc":
            self._attach_output(plan, out, tangent)
        return out

    def _elementwise_on_arrays(self, plan: _Plan, full: tuple[Any, ...], out: Any) -> bool:
        """The common case of an ELEMENTWISE op, in the fewest steps: the sum of its VJP rules applied to the
        tangents' arrays, without hiding this level. For a real floating output, when this level is the only
        layer and the rule may run on arrays (``_on_arrays``: then its arithmetic dispatches nothing, and an op it
        calls on arrays passes through this level untouched), and each tangent's dims line up with the output's
        from the end (no batch, or a batch of tangents of an input with the output's number of dims). True when
        the call is done (its tangent attached, or no input has one); False leaves it to the general path.

        With complex values a rule gives ``g conj(f'(z))``: the general path (``_elementwise_jvp``) handles them."""
        if out.__class__ is not Tensor:
            return False
        data = out.data
        if data.dtype.kind != "f":
            return False
        layers = dispatch.DISPATCH.layers
        if len(layers) != 1 or layers[0] is not self:
            return False
        check = self.record and STATE.grad_enabled  # then nothing the rule reads may require grad
        arrays = list(full)
        tangents = []
        found = False
        for p in plan.positions:
            a = full[p]
            t = None
            if isinstance(a, Tensor):
                arrays[p] = value = a.data
                if value.dtype.kind == "c" or (check and a._requires_grad):
                    return False
                extra = a._extra
                if extra is not None and extra.tangents:
                    t = extra.tangents.get(self)
                    if t is not None:
                        found = True
                        if check and t._requires_grad:
                            return False
            elif a.__class__ is not float and a.__class__ is not int and is_complex(a):
                return False
            tangents.append(t)
        if not found:
            return True
        ndim = data.ndim
        total = None
        for (vjp, p, entries, where), t in zip(plan.terms, tangents):
            if t is None or vjp is NONDIFF:
                continue
            t = t.data
            a = arrays[p]
            if t.dtype.kind == "c" or (t.ndim != (a.ndim if type(a) is np.ndarray else np.ndim(a)) and t.ndim <= ndim):
                return False  # complex, or a batch of tangents of a broadcast input: its dims need aligning
            if where is None:
                term = vjp(t, *[_planned_value(e, arrays, data) for e in entries]) if entries else vjp(t)
            else:  # one value (x, y or out): the common case
                term = vjp(t, data if where < 0 else arrays[where])
            total = term if total is None else total + term
        if total is None:  # only inputs without a rule (NONDIFF) carry tangents
            return True
        shape = total.shape
        if shape != data.shape and shape[len(shape) - ndim:] != data.shape:
            total = ops.broadcast_to(total, shape[: len(shape) - ndim] + data.shape)
        self._attach_output(plan, out, total)
        return True

    def _attach_output(self, plan: _Plan, out: Tensor, tangent: Any) -> None:
        """Give an op's single output its tangent, and its node the output saved with it if it saves it."""
        self.attach(out, tangent)
        if plan.saves_output and out.grad_fn is not None:
            _save_with_tangents((out,))

    def _on_arrays(self, plan: _Plan, full: tuple[Any, ...], tangents: list[Any]) -> bool:
        """Whether the JVP rule of this call may run on arrays (see the class docstring), once the caller knows
        this level is the outermost and no other layer is installed."""
        if not self.record or not STATE.grad_enabled:
            return True
        for t in tangents:
            if t is not None and t._requires_grad:
                return False
        values = full[plan.sequence] if plan.sequence is not None else [full[p] for p in plan.positions]
        for v in values:
            if isinstance(v, Tensor) and v._requires_grad:
                return False
        return True


class _Plan:
    """What ``ForwardLayer.op`` needs to know of an op, worked out from its ``OpSpec`` once."""

    __slots__ = ("n_params", "sequence", "positions", "inputs", "elementwise", "terms", "saves_output")

    def __init__(self, spec: OpSpec) -> None:
        self.n_params = len(spec.params)
        # the position of the sequence input, if any
        self.sequence = spec.params.index(spec.sequence) if spec.sequence else None
        self.positions = spec.tensor_positions
        # per tensor input, its position among the bound arguments, or -1 without a rule (NONDIFF)
        self.inputs = tuple(p if rule is not NONDIFF else -1 for p, rule in zip(spec.tensor_positions,
                                                                                 spec.rules.values()))
        self.elementwise = spec.jvp is ELEMENTWISE and not spec.sequence
        # ELEMENTWISE: per tensor input, its VJP rule, its position, where each value the rule reads comes from
        # (``_entry``) and, when it reads one value of the call (an input or the output), that value's position
        # (-1: the output)
        plan = _value_plan(spec)
        self.terms = tuple((vjp, p, entries, entries[0][0] if len(entries) == 1 and entries[0][1] == 0 else None)
                           for (vjp, _slot, idx), p in zip(spec.node_class._rules, spec.tensor_positions)  # type: ignore[attr-defined]
                           for entries in (tuple(plan[i] for i in idx),))
        self.saves_output = spec.out_index >= 0  # its node saves its output (then with the output's tangents)


_PLANS: dict[OpSpec, _Plan] = {}


def _plan(spec: OpSpec) -> _Plan:
    plan = _PLANS[spec] = _Plan(spec)
    return plan


def _jvp_on_arrays(spec: OpSpec, full: tuple[Any, ...], out: Any, tangents: list[Any]) -> Any:
    """``_jvp`` with every Tensor (inputs, output, tangents) replaced by its array."""
    return _jvp(spec, _arrays(spec, full), _data(out), [None if t is None else t.data for t in tangents])


def _data(value: Any) -> Any:
    """A Tensor's array (each of a tuple's), anything else as it is."""
    if isinstance(value, Tensor):
        return value.data
    if type(value) is tuple:
        return tuple(_data(v) for v in value)
    return value


def _arrays(spec: OpSpec, full: tuple[Any, ...]) -> tuple[Any, ...]:
    """An op call's bound arguments with its Tensors replaced by their arrays."""
    if spec.sequence:
        i = spec.params.index(spec.sequence)
        return full[:i] + ([_data(v) for v in full[i]],) + full[i + 1:]
    arrays = list(full)
    for p in spec.tensor_positions:
        if isinstance(arrays[p], Tensor):
            arrays[p] = arrays[p].data
    return tuple(arrays)


def _save_with_tangents(outputs: tuple[Any, ...]) -> None:
    """Make the node that computed ``outputs`` save them with their tangents (as torch's SavedVariable
    keeps the forward grad), so a backward run inside this level sees them: without it, forward-over-
    reverse would lose every rule's use of ``out``. Each is saved as a ``SavedOutput`` whose ``dual`` is
    a detached Tensor holding the tangent, so the node and its outputs form no reference cycle."""
    node = getattr(outputs[0], "grad_fn", None)
    spec = getattr(type(node), "_spec", None)
    if spec is None or spec.out_index < 0 or node._saved is FREED or node._saved[spec.out_index] is None:
        return
    i, version = spec.out_index, node._versions[spec.out_index]
    if spec.multi_output and type(version) is tuple:
        value, version = tuple(saved_dual(o, nr) for nr, o in enumerate(outputs)), version
    elif type(version) is list:  # a single output, saved as its array with its version counter
        value, version = saved_dual(outputs[0], 0), version[0]  # type: ignore[assignment]
    elif type(node._saved[i]) is SavedOutput:  # saved with the tangents of an earlier level: now with all
        value = saved_dual(outputs[0], 0)  # type: ignore[assignment]
    else:  # packed by saved_tensors_hooks: left to the hooks
        return
    node._saved = node._saved[:i] + (value,) + node._saved[i + 1:]
    node._versions = node._versions[:i] + (version,) + node._versions[i + 1:]


def saved_dual(output: Tensor, output_nr: int) -> SavedOutput:
    """``output`` as a ``SavedOutput`` carrying its current tangents on a detached holder."""
    holder = Tensor._wrap(output.data) if tangents_of(output) else None
    if holder is not None:
        carry_tangent(output, holder)
    return SavedOutput(output.data, output._version_counter, output_nr, holder)


def dense(tangent: Tensor | None) -> Tensor | None:
    """A tangent as callers see it: a batch kept structured inside the pass (``funcgrad.core.structured``,
    e.g. the identity of a forward-mode Jacobian) is made an ordinary array, differentiably."""
    if tangent is None or not isinstance(tangent.data, Structured):
        return tangent
    return ops.to_copy(tangent, tangent.dtype)


def _sequence_tangents(spec: OpSpec, full: tuple[Any, ...], level: DualLevel) -> list[Any] | None:
    """One entry per element of the sequence input of ``spec`` (cat, stack, einsum): its tangent at ``level``, or
    None; None when no element has one. (Ops on separate tensors look theirs up inline, in ``ForwardLayer.op``.)"""
    found = False
    tangents: list[Any] = []
    for a in full[spec.params.index(spec.sequence)]:  # type: ignore[arg-type]
        t = tangent_of(a, level)
        found = found or t is not None
        tangents.append(t)
    return tangents if found else None


def _primals(spec: OpSpec, full: tuple[Any, ...]) -> list[Any]:
    """The inputs the tangents of an op call pair with (one per tensor input, or per sequence element)."""
    if spec.sequence:
        return list(full[spec.params.index(spec.sequence)])
    return [full[p] for p in spec.tensor_positions]


def _batch(tangents: list[Any], primals: list[Any]) -> int | None:
    """The batch size if some tangent carries a leading batch dimension, else None."""
    for t, p in zip(tangents, primals):
        if t is not None and t.ndim > np.ndim(p):
            return t.shape[0]
    return None


def _named_value(spec: OpSpec, name: str, full: tuple[Any, ...], out: Any) -> Any:
    if name == "out":
        return out
    if name in spec.params:
        return full[spec.params.index(name)]
    source = name[: -len("_shape")]
    value = full[spec.params.index(source)]
    return tuple(np.shape(e) for e in value) if source == spec.sequence else np.shape(value)


def zeros_like(value: Any) -> Any:
    """The tangent of an input without one: zeros of its shape, a Tensor for a Tensor (an array for an array)."""
    zeros = np.zeros(np.shape(value), np.result_type(value, np.float32))
    return Tensor._wrap(zeros) if isinstance(value, Tensor) else zeros


def _jvp(spec: OpSpec, full: tuple[Any, ...], out: Any, tangents: list[Any]) -> Any:
    rule = spec.jvp
    if rule is None:
        raise NotImplementedError(f"trying to use forward AD with '{spec.name}', which has no forward-mode (jvp) rule")
    if rule is ELEMENTWISE:
        return _elementwise_jvp(spec, full, out, tangents)
    if rule is LINEAR:
        return _linear_jvp(spec, full, tangents)
    return _explicit_jvp(spec, rule, full, out, tangents)


def _elementwise_jvp(spec: OpSpec, full: tuple[Any, ...], out: Any, tangents: list[Any]) -> Any:
    """Sum of the VJP rules with each tangent as g, batched tangents aligned to the output's dims first.

    With complex values a rule gives ``g conj(f'(z))``, so the term is ``conj(vjp(conj(t)))`` = ``f'(z) t`` (for
    holomorphic f, and for real-valued f of z once the real part is taken: then it is Re(conj(vjp(1)) t))."""
    total = None
    ndim = out.ndim
    complex_out = complex_ = out.dtype.kind == "c"
    primals = _primals(spec, full)
    if not complex_:
        for t, p in zip(tangents, primals):
            if t is not None and (t.dtype.kind == "c" or is_complex(p)):
                complex_ = True
                break
    plan = _value_plan(spec)
    for (vjp, _slot, idx), t, p in zip(spec.node_class._rules, tangents, primals):  # type: ignore[attr-defined]
        if t is None:
            continue
        p_ndim = p.ndim if isinstance(p, Tensor | np.ndarray) else np.ndim(p)
        if t.ndim != p_ndim and p_ndim < ndim:  # a batch of tangents of a broadcast input: its dims go in
            t = align(t, p, ndim)  # front of the output's
        values = [_planned_value(plan[i], full, out) for i in idx]
        term = ops.conj(vjp(ops.conj(t), *values)) if complex_ else vjp(t, *values)
        total = term if total is None else total + term
    if complex_ and not complex_out and total.dtype.kind == "c":
        total = ops.real(total)
    shape = total.shape
    if shape != out.shape and tuple(shape[len(shape) - ndim:]) != out.shape:
        total = ops.broadcast_to(total, tuple(shape[: len(shape) - ndim]) + out.shape)
    return total


_VALUE_PLANS: dict[OpSpec, tuple[tuple[int, int], ...]] = {}


def _value_plan(spec: OpSpec) -> tuple[tuple[int, int], ...]:
    """Per saved name of ``spec``: ``_entry``'s plan, so ``_named_value``'s string work is done once per op."""
    plan = _VALUE_PLANS.get(spec)
    if plan is None:
        plan = _VALUE_PLANS[spec] = tuple(_entry(spec, name) for name in spec.saved_names)
    return plan


def _entry(spec: OpSpec, name: str) -> tuple[int, int]:
    """Where a rule's value ``name`` comes from: ``(position in the bound arguments or -1 for out, what of it:
    0 the value, 1 its shape, 2 its elements' shapes)``."""
    if name == "out":
        return -1, 0
    if name in spec.params:
        return spec.params.index(name), 0
    source = name[: -len("_shape")]
    return spec.params.index(source), 2 if source == spec.sequence else 1


def _planned_value(entry: tuple[int, int], full: Sequence[Any], out: Any) -> Any:
    position, kind = entry
    if position < 0:
        return out
    value = full[position]
    if kind == 0:
        return value
    return np.shape(value) if kind == 1 else tuple(np.shape(e) for e in value)


def _linear_jvp(spec: OpSpec, full: tuple[Any, ...], tangents: list[Any]) -> Any:
    """The op applied to the tangents; a batch of tangents goes one direction at a time (slow: ops with a
    batch-aware form state it as an explicit rule instead). The op is called as a rule's ops are, with its
    dispatch check (not ``spec.plain``), so the levels entered earlier see it: the tangent of the tangent
    (``jacfwd(jacfwd(f))``, jvp of jvp) through ``real`` or an in-place write into a view was lost."""
    op = getattr(ops, spec.name)
    primals = _primals(spec, full)
    if spec.sequence:
        pos = spec.params.index(spec.sequence)
    else:
        positions = spec.tensor_positions
        rules = list(spec.rules.values())
    filled = [t if t is not None else zeros_like(p) for t, p in zip(tangents, primals)]
    batch = _batch(tangents, primals)

    def apply(ts: list[Any]) -> Any:
        args = list(full)
        if spec.sequence:
            args[pos] = ts
        else:
            for p, t, rule in zip(positions, ts, rules):
                if rule is not NONDIFF:
                    args[p] = t
        return op(*args)

    if batch is None:
        return apply(filled)
    per_direction = [[t[b] if t.ndim > np.ndim(p) else t for t, p in zip(filled, primals)] for b in range(batch)]
    return ops.stack([apply(ts) for ts in per_direction])


_JVP_PARAMS: dict[int, tuple[list[str], set[str]]] = {}
_EXPLICIT_PLANS: dict[OpSpec, tuple[tuple[bool, int, int], ...]] = {}


def _explicit_jvp(spec: OpSpec, rule: Callable[..., Any], full: tuple[Any, ...], out: Any,
                  tangents: list[Any]) -> Any:
    """Call a stated JVP rule: a tangent parameter declared ``= None`` gets None for an input without
    a tangent (the rule skips that term), any other gets zeros."""
    if not spec.sequence:
        values = []
        for tangent, a, b in _explicit_plan(spec, rule):
            if tangent:
                t = tangents[a]
                values.append(t if t is not None or b else zeros_like(full[spec.tensor_positions[a]]))
            elif b == 0:
                values.append(out if a < 0 else full[a])
            else:
                values.append(_planned_value((a, b), full, out))
        return rule(*values)
    names, optional = _parameters(rule)
    primals = _primals(spec, full)
    by_slot = {spec.sequence: [t if t is not None else zeros_like(p) for t, p in zip(tangents, primals)]}
    values = [by_slot[name[:-2]] if name.endswith("_t") and name[:-2] in by_slot
              else _named_value(spec, name, full, out) for name in names]
    return rule(*values)


def _parameters(rule: Callable[..., Any]) -> tuple[list[str], set[str]]:
    """A JVP rule's parameter names, and those declared ``= None``."""
    params = _JVP_PARAMS.get(id(rule))
    if params is None:
        signature = inspect.signature(rule).parameters
        params = _JVP_PARAMS[id(rule)] = (list(signature), {n for n, p in signature.items() if p.default is None})
    return params


def _explicit_plan(spec: OpSpec, rule: Callable[..., Any]) -> tuple[tuple[bool, int, int], ...]:
    """Per parameter of ``spec``'s JVP rule (an op without a sequence input): ``(True, k, optional)`` for the
    tangent of its k-th tensor input (``<input>_t``; ``optional``: None rather than zeros when it has none),
    else ``(False, *_entry)``."""
    plan = _EXPLICIT_PLANS.get(spec)
    if plan is None:
        names, optional = _parameters(rule)
        slots = list(spec.rules)
        entries = []
        for name in names:
            slot = name[:-2]
            if name.endswith("_t") and slot in spec.rules and spec.rules[slot] is not NONDIFF:
                entries.append((True, slots.index(slot), int(name in optional)))
            else:
                entries.append((False, *_entry(spec, name)))
        plan = _EXPLICIT_PLANS[spec] = tuple(entries)
    return plan


def inplace_tangent(target: Tensor, result: Tensor) -> None:
    """After ``target`` was overwritten with ``result`` in place: ``result``'s tangents become ``target``'s
    and every live view of ``target`` gets the matching part of each."""
    extra = target._extra
    views = [v for v in (ref() for ref in (extra.views or ())) if v is not None] if extra is not None else []
    for level, tangent in list(tangents_of(result).items()):
        level.attach(target, tangent)
        with dispatch.suspended(*level.and_later()):
            for view in views:
                level.attach(view, _view_tangent(view._extra.view_fn, tangent, target))


def _view_tangent(view_fn: Callable[[Any], Any], tangent: Tensor, base: Tensor) -> Any:
    """``view_fn`` (which replays view ops on base-shaped values) applied to a tangent, per direction
    for a batch of them; through the op ``view_region``, so that the outer levels see it (``view_fn``
    replays past the dispatch layers: the tangent's own tangents would be lost, as in jacfwd(jacfwd(f)))."""
    if tangent.ndim == base.ndim:
        return ops.view_region(tangent, view_fn)
    return ops.stack([ops.view_region(tangent[b], view_fn) for b in range(tangent.shape[0])])
