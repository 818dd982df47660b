"""Forward-mode AD, as ``torch.autograd.forward_ad``: dual tensors whose tangents flow through every op.

While a ``dual_level`` is active, a dispatch layer gives the output of every op whose inputs carry
tangents the tangent the op table's JVP rule computes:

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
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from funcgrad.autograd import dispatch
from funcgrad.autograd.graph import FREED, SavedOutput
from funcgrad.autograd.structured import Structured
from funcgrad.ops.registry import ELEMENTWISE, LINEAR, NONDIFF, OpSpec
from funcgrad.tensor import Tensor

__all__ = ["dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor", "enter_dual_level", "exit_dual_level"]


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view without tangent) and the tangent (or None)."""

    primal: Tensor
    tangent: Tensor | None


class _ForwardLayer(dispatch.Layer):
    """The dispatch layer of the active dual level: computes output tangents. Backward passes run their
    rules on Tensors meanwhile (recording nothing unless ``create_graph``), so gradients computed from
    values that carry tangents carry theirs: forward-over-reverse needs no recorded second graph."""

    tensor_gradients = True

    def __init__(self) -> None:
        self.duals: list[weakref.ref[Tensor]] = []  # tensors given a tangent at this level
        self.quiet = 0  # > 0 while ops compute primal values only (make_dual, unpack_dual, a Function's forward)

    def op(self, spec: OpSpec, proceed: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = proceed(args, kwargs)
        if self.quiet:
            return out
        full = spec.bind(args, kwargs)
        tangents = _input_tangents(spec, full)
        if all(t is None for t in tangents):
            return out
        with dispatch.suspended(self):  # the rule's own ops compute values only
            tangent = _jvp(spec, full, out, tangents)
        if spec.multi_output:
            for o, t in zip(out, tangent):
                if t is not None and isinstance(o, Tensor) and o.dtype.kind in "fc":
                    self.attach(o, t)
            _save_with_tangents(out)
        elif isinstance(out, Tensor) and tangent is not None and out.dtype.kind in "fc":
            self.attach(out, tangent)
            _save_with_tangents((out,))
        return out

    def attach(self, tensor: Tensor, tangent: Any) -> None:
        """Give ``tensor`` its tangent at this level."""
        tensor._get_extra().tangent = tangent if isinstance(tangent, Tensor) else Tensor(tangent)
        self.duals.append(weakref.ref(tensor))


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
        value, version = tuple(_saved_dual(o, nr) for nr, o in enumerate(outputs)), version
    elif type(version) is list:  # a single output, saved as its array with its version counter
        value, version = _saved_dual(outputs[0], 0), version[0]
    else:  # packed by saved_tensors_hooks: left to the hooks
        return
    node._saved = node._saved[:i] + (value,) + node._saved[i + 1:]
    node._versions = node._versions[:i] + (version,) + node._versions[i + 1:]


def _saved_dual(output: Tensor, output_nr: int) -> SavedOutput:
    """``output`` as a ``SavedOutput`` carrying its current tangent on a detached holder."""
    holder = Tensor._wrap(output.data) if _tangent(output) is not None else None
    if holder is not None:
        carry_tangent(output, holder)
    return SavedOutput(output.data, output._version_counter, output_nr, holder)


_LEVEL: list[_ForwardLayer] = []


def enter_dual_level() -> int:
    """Start a dual level (only one at a time, as torch); returns its index."""
    if _LEVEL:
        raise RuntimeError("Nested forward mode AD is not supported; exit the current dual_level first")
    layer = _ForwardLayer()
    _LEVEL.append(layer)
    dispatch.push(layer)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """End the dual level: every tangent set inside it is dropped."""
    if not _LEVEL:
        raise RuntimeError("exit_dual_level called outside a dual level")
    layer = _LEVEL.pop()
    dispatch.pop(layer)
    for ref in layer.duals:
        tensor = ref()
        if tensor is not None and tensor._extra is not None:
            tensor._extra.tangent = None


class dual_level:
    """Context manager for forward-mode AD: tangents set by ``make_dual`` inside it flow through ops.

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.autograd import forward_ad as fwAD
        >>> x = fg.tensor([1.0, 2.0])
        >>> with fwAD.dual_level():
        ...     y = fg.sin(fwAD.make_dual(x, fg.ones(2))) * 2
        ...     fwAD.unpack_dual(y).tangent
        tensor([ 1.08060461, -0.83229367])
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()


def _layer() -> _ForwardLayer:
    if not _LEVEL:
        raise RuntimeError("make_dual/unpack_dual need an active forward AD level: use `with dual_level():`")
    return _LEVEL[-1]


def make_dual(tensor: Tensor, tangent: Any, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` (same shape, or one extra leading batch dimension).

    Args:
        tensor: the primal (floating dtype); its reverse-mode history is kept.
        tangent: the direction, a Tensor or array of ``tensor``'s shape, or ``(batch, *shape)``.
    """
    from funcgrad.ops import alias

    layer = _layer()
    if not isinstance(tangent, Tensor):  # a structured batch (the identity of a Jacobian) stays structured
        tangent = Tensor._wrap(tangent) if isinstance(tangent, Structured) else Tensor(np.asarray(tangent))
    if tensor.dtype.kind not in "fc" or tangent.dtype.kind not in "fc":
        raise ValueError(f"make_dual expects floating point primal and tangent, got {tensor.dtype} and "
                         f"{tangent.dtype}")
    wider = np.result_type(tensor.dtype, tangent.dtype)
    if wider != tangent.dtype and type(tangent.data) is np.ndarray:
        tangent = tangent.to(wider)  # a float32 tangent of a float64 primal computes in float64, as torch
    if tangent.shape != tensor.shape and tangent.shape[1:] != tensor.shape:
        raise ValueError(f"Trying to set a forward gradient that has a different size than that of the original "
                         f"Tensor: tangent shape {tangent.shape} vs primal shape {tensor.shape} (a batch of "
                         f"tangents may add one leading dimension)")
    layer.quiet += 1
    try:
        dual = alias(tensor)
    finally:
        layer.quiet -= 1
    layer.attach(dual, tangent)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """Split a dual tensor into ``(primal, tangent)``; the tangent is None when it has none."""
    from funcgrad.ops import alias

    tangent = _tangent(tensor)
    if not _LEVEL:
        return UnpackedDualTensor(tensor, None)
    layer = _LEVEL[-1]
    layer.quiet += 1
    try:
        primal = alias(tensor)
        tangent = _dense(tangent)
    finally:
        layer.quiet -= 1
    return UnpackedDualTensor(primal, tangent)


def _dense(tangent: Tensor | None) -> Tensor | None:
    """A tangent as callers see it: a batch kept structured inside the pass (``funcgrad.autograd.structured``,
    e.g. the identity of a forward-mode Jacobian) is made an ordinary array, differentiably."""
    from funcgrad.ops import to_copy

    if tangent is None or not isinstance(tangent.data, Structured):
        return tangent
    return to_copy(tangent, tangent.dtype)


def _tangent(value: Any) -> Tensor | None:
    if isinstance(value, Tensor) and value._extra is not None:
        return value._extra.tangent
    return None


def _input_tangents(spec: OpSpec, full: tuple[Any, ...]) -> list[Any]:
    """One entry per rule input (per element of a sequence input): its tangent, or None (also for NONDIFF)."""
    if spec.sequence:
        return [_tangent(a) for a in full[spec.params.index(spec.sequence)]]
    return [_tangent(full[p]) if rule is not NONDIFF else None
            for p, rule in zip(spec.tensor_positions, spec.rules.values())]


def _primals(spec: OpSpec, full: tuple[Any, ...]) -> list[Any]:
    """The inputs ``_input_tangents`` pairs its entries with."""
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


def _zeros_like(value: Any) -> Tensor:
    return Tensor(np.zeros(np.shape(value), np.result_type(value, np.float32)))


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
    """Sum of the VJP rules with each tangent as g, batched tangents aligned to the output's dims first."""
    from funcgrad.ops import broadcast_to
    from funcgrad.ops.formulas import align

    total = None
    ndim = out.ndim
    for (vjp, _slot, idx), t, p in zip(spec.node_class._rules, tangents, _primals(spec, full)):
        if t is None:
            continue
        if t.ndim != np.ndim(p):  # a batch of tangents: its dims go in front of the output's
            t = align(t, p, ndim)
        term = vjp(t, *[_named_value(spec, spec.saved_names[i], full, out) for i in idx])
        total = term if total is None else total + term
    shape = total.shape
    if shape != out.shape and tuple(shape[len(shape) - ndim:]) != out.shape:
        total = broadcast_to(total, tuple(shape[: len(shape) - ndim]) + out.shape)
    return total


def _linear_jvp(spec: OpSpec, full: tuple[Any, ...], tangents: list[Any]) -> Any:
    """The op applied to the tangents; a batch of tangents goes one direction at a time (slow: ops with a
    batch-aware form state it as an explicit rule instead)."""
    from funcgrad.ops import stack

    primals = _primals(spec, full)
    if spec.sequence:
        pos = spec.params.index(spec.sequence)
    else:
        positions = spec.tensor_positions
        rules = list(spec.rules.values())
    filled = [t if t is not None else _zeros_like(p) for t, p in zip(tangents, primals)]
    batch = _batch(tangents, primals)

    def apply(ts: list[Any]) -> Any:
        args = list(full)
        if spec.sequence:
            args[pos] = ts
        else:
            for p, t, rule in zip(positions, ts, rules):
                if rule is not NONDIFF:
                    args[p] = t
        return spec.plain(*args)

    if batch is None:
        return apply(filled)
    per_direction = [[t[b] if t.ndim > np.ndim(p) else t for t, p in zip(filled, primals)] for b in range(batch)]
    return stack([apply(ts) for ts in per_direction])


_JVP_PARAMS: dict[int, tuple[list[str], set[str]]] = {}


def _explicit_jvp(spec: OpSpec, rule: Callable[..., Any], full: tuple[Any, ...], out: Any,
                  tangents: list[Any]) -> Any:
    """Call a stated JVP rule: a tangent parameter declared ``= None`` gets None for an input without
    a tangent (the rule skips that term), any other gets zeros."""
    params = _JVP_PARAMS.get(id(rule))
    if params is None:
        signature = inspect.signature(rule).parameters
        params = _JVP_PARAMS[id(rule)] = (list(signature),
                                          {n for n, p in signature.items() if p.default is None})
    names, optional = params
    primals = _primals(spec, full)
    if spec.sequence:
        by_slot: dict[str, Any] = {spec.sequence: [t if t is not None else _zeros_like(p)
                                                   for t, p in zip(tangents, primals)]}
    else:
        by_slot = {s: t if t is not None or s + "_t" in optional else _zeros_like(p)
                   for s, t, p, r in zip(spec.rules, tangents, primals, spec.rules.values()) if r is not NONDIFF}
    values = [by_slot[name[:-2]] if name.endswith("_t") and name[:-2] in by_slot
              else _named_value(spec, name, full, out) for name in names]
    return rule(*values)


# ----- custom Functions (funcgrad.autograd.Function) ------------------------------------------------
def function_tangents(inputs: tuple[Any, ...]) -> list[Any] | None:
    """For ``Function.apply``: one tangent per input (zeros for a Tensor without one, None for anything
    else), or None when no dual level is active or no input has a tangent."""
    if not _LEVEL or all(_tangent(a) is None for a in inputs):
        return None
    with primal_only():
        return [(_dense(_tangent(a)) if _tangent(a) is not None else _zeros_like(a)) if isinstance(a, Tensor)
                else None for a in inputs]


class primal_only:
    """Context manager: ops inside it compute values only, no tangents (a Function's forward and jvp)."""

    def __enter__(self) -> None:
        if _LEVEL:
            _LEVEL[-1].quiet += 1

    def __exit__(self, *exc: object) -> None:
        if _LEVEL:
            _LEVEL[-1].quiet -= 1


def attach_function_tangents(name: str, tangents: Any, outputs: Any) -> None:
    """Give a Function's outputs the tangents its ``jvp`` returned (one per output, None for none)."""
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    tangents = tangents if isinstance(tangents, tuple | list) else (tangents,)
    if len(tangents) != len(outs):
        raise RuntimeError(f"{name}.jvp returned {len(tangents)} tangents but forward returned {len(outs)} outputs; "
                           "return one tangent (or None) per output")
    for i, (o, t) in enumerate(zip(outs, tangents)):
        if t is None or not isinstance(o, Tensor) or o.dtype.kind not in "fc":
            continue
        t = t if isinstance(t, Tensor) else Tensor(np.asarray(t))
        if t.shape != o.shape and t.shape[1:] != o.shape:
            raise RuntimeError(f"{name}.jvp returned a tangent of shape {list(t.shape)} for output {i} of shape "
                               f"{list(o.shape)}; a tangent has its output's shape (or one extra leading batch dim)")
        _LEVEL[-1].attach(o, t)
    _give_saved_outputs_tangents(outs)


def _give_saved_outputs_tangents(outputs: tuple[Any, ...]) -> None:
    """Outputs a Function saved for its backward get the tangents just attached (for forward-over-reverse)."""
    node = next((o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None), None)
    saved = getattr(node, "_saved", None)
    if not isinstance(saved, tuple) or saved is FREED:  # no node, nothing saved yet, or freed
        return
    node._saved = tuple(_saved_dual(outputs[v.output_nr], v.output_nr) if type(v) is SavedOutput and v.dual is None
                        and v.output_nr < len(outputs) and outputs[v.output_nr].grad_fn is node else v for v in saved)


# ----- in-place operations (funcgrad.tensor._inplace, funcgrad.autograd.views.inplace_on_view) -------
def has_tangent(*values: Any) -> bool:
    """True when a dual level is active and one of ``values`` (or of a tuple among them) carries a tangent."""
    return bool(_LEVEL) and any(_tangent(v) is not None for a in values for v in (a if isinstance(a, tuple) else (a,)))


def carry_tangent(source: Tensor, target: Tensor) -> None:
    """Give ``target`` ``source``'s tangent, if any (a copy an in-place op computes from, or a saved output
    a backward unpacks)."""
    tangent = _tangent(source)
    if tangent is not None:
        _LEVEL[-1].attach(target, tangent)


def inplace_tangent(target: Tensor, result: Tensor) -> None:
    """After ``target`` was overwritten with ``result`` in place: ``result``'s tangent becomes ``target``'s
    and every live view of ``target`` gets the matching part of it."""
    tangent = _tangent(result)
    if tangent is None:
        return
    layer = _LEVEL[-1]
    layer.attach(target, tangent)
    extra = target._extra
    views = [v for v in (ref() for ref in (extra.views or ())) if v is not None]
    layer.quiet += 1
    try:
        for view in views:
            layer.attach(view, _view_tangent(view._extra.view_fn, tangent, target))
    finally:
        layer.quiet -= 1


def _view_tangent(view_fn: Callable[[Any], Any], tangent: Tensor, base: Tensor) -> Any:
    """``view_fn`` (which replays view ops on base-shaped values) applied to a tangent, per direction
    for a batch of them."""
    from funcgrad.ops import stack

    if tangent.ndim == base.ndim:
        return view_fn(tangent)
    return stack([view_fn(tangent[b]) for b in range(tangent.shape[0])])
