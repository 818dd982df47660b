"""The node classes of table ops: ``node_class(spec, rules)`` makes ``<Name>Backward0``, whose ``apply``
runs one backward rule per input that needs a gradient. Rules get the saved values they name."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.grad_mode import STATE
from funcgrad.core.graph import UNCHECKED_PAIR, Node, keep_saved, next_sequence_nr, unchecked
from funcgrad.core.tensor import Tensor

if TYPE_CHECKING:
    from funcgrad.ops.registry import OpSpec


def camel(name: str) -> str:
    """``"log_softmax"`` -> ``"LogSoftmax"``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def node_class(spec: OpSpec, bound: tuple[Any, ...]) -> type[Node]:
    """The node class of ``spec``; ``bound`` holds ``(rule, input name, saved-value indices)`` per input."""
    base = _SequenceOpNode if spec.sequence else _OpNode
    attrs = {"_name": f"{camel(spec.name)}Backward0", "_rules": bound, "_spec": spec}
    slots: tuple[str, ...] = ()
    if not spec.sequence and not spec.multi_output and all(callable(rule) for rule, _, _ in bound):
        if len(bound) == 1 and hasattr(bound[0][0], "derivative") and spec.saved_positions == (0,):
            attrs["apply"] = _scaled_apply(bound[0][0])  # g * conj(f'(x)), f'(x) kept by create_graph passes
            slots = ("_derivative",)
        elif len(bound) == 1:  # one input: its rule is called directly
            attrs["apply"] = _unary_apply(bound[0][0], bound[0][2], len(spec.saved_positions))
        elif len(bound) == 2:  # two inputs: each rule is called only when its input needs a gradient
            attrs["apply"] = _binary_apply(bound[0][0], bound[0][2], bound[1][0], bound[1][2])
    if not spec.multi_output:
        attrs["__slots__"] = slots  # multi-output nodes keep a __dict__ for their per-call _n_outputs
    return type(f"{camel(spec.name)}Backward0", (base,), attrs)


def _missing(spec: OpSpec, slot: str) -> NotImplementedError:
    return NotImplementedError(f"the derivative of '{spec.name}' with respect to '{slot}' is not implemented")


class _OpNode(Node):
    """A node generated from a table entry: runs one rule per input that needs a gradient."""

    __slots__ = ()
    _rules: tuple[Any, ...] = ()
    _spec: OpSpec

    def _gradient(self, grad_outputs: list[Any]) -> Any:
        """The outputs' gradients as a tuple; None for an output that received none (as torch's undefined
        gradients: a rule skips its terms, so e.g. eigh's values alone never divide by eigenvalue gaps)."""
        return tuple(grad_outputs) if self._spec.multi_output else grad_outputs[0]

    def apply(self, grad_outputs: list[Any], as_tensors: bool) -> list[Any]:
        values = self.unpack_saved(as_tensors) if self._saved else ()
        g = self._gradient(grad_outputs)
        grads: list[Any] = []
        for (rule, slot, idx), (edge, *_) in zip(self._rules, self._edges):
            if edge is None:
                grads.append(None)
            elif not callable(rule):  # None or NONDIFF
                raise _missing(self._spec, slot)
            elif not idx:
                grads.append(rule(g))
            elif len(idx) == 1:
                grads.append(rule(g, values[idx[0]]))
            else:
                grads.append(rule(g, *[values[i] for i in idx]))
        return grads


Apply = Callable[[Node, list[Any], bool], list[Any]]


def _unary_apply(rule: Callable[..., Any], read: tuple[int, ...], n_saved: int) -> Apply:
    """``apply`` of a one-input, one-output op (sin, sum, reshape, ...), the hottest code of a backward pass:
    its rule and what it reads are bound in (no attribute lookups), a lone saved input is checked inline, and
    values that need no check (sum's shape and dims) are read as saved."""
    if not read:
        def apply_reading_nothing(self: Node, grad_outputs: list[Any], as_tensors: bool) -> list[Any]:
            return [rule(grad_outputs[0])]
        return apply_reading_nothing

    no_checks = unchecked(n_saved)

    def apply(self: Node, grad_outputs: list[Any], as_tensors: bool) -> list[Any]:
        saved = self._saved
        if self._versions is no_checks and saved.__class__ is tuple:
            return [_call(rule, grad_outputs[0], saved, read)]
        if saved.__class__ is tuple and len(saved) == 1:
            value, = saved
            version, = self._versions
            if version.__class__ is int:  # one saved input (sin, log...)
                if value.__class__ is Tensor and value._version_counter[0] == version:
                    return [rule(grad_outputs[0], value if as_tensors else value.data)]
            elif version.__class__ is list and not version[0]:  # its own output (exp, tanh...), unchanged
                return [rule(grad_outputs[0], Tensor._from_node(value, self, 0, version) if as_tensors else value)]
        return [_call(rule, grad_outputs[0], self.unpack_saved(as_tensors), read)]
    return apply


def _scaled_apply(rule: Any) -> Apply:
    """``apply`` of an op on ``(x)`` whose rule is ``formulas.Scaled``: ``g * conj(f'(x))``. A ``create_graph`` pass
    (rules on Tensors, grad mode on, no dispatch layer) keeps the Tensor ``f'(x)`` it records on the node, and
    later such passes multiply by it again: the graph of a k-th derivative then holds one ``f'(x)`` per node, not
    one per node and order. The kept Tensor is used while ``x`` is unchanged (its version is checked first, as
    always); the nodes of its history keep their saved values (``graph.KeptSaved``), since the graphs of several
    passes share them. Passes on arrays, or through dispatch layers (forward AD, vmap, jit tracing, saved-tensor
    hooks), compute ``f'(x)`` afresh."""
    derivative, scale = rule.derivative, rule.scale

    def apply_scaled(self: Node, grad_outputs: list[Any], as_tensors: bool) -> list[Any]:
        saved = self._saved
        x = saved[0] if saved.__class__ is tuple else None
        if x.__class__ is Tensor and x._version_counter[0] == self._versions[0]:  # the saved input, unchanged
            x = x if as_tensors else x.data
        else:
            x, = self.unpack_saved(as_tensors)
        if not as_tensors:
            return [scale(grad_outputs[0], derivative(x))]
        if not STATE.grad_enabled or DISPATCH.active:
            return [rule(grad_outputs[0], x)]
        kept = getattr(self, "_derivative", None)
        if kept is None:
            since = next_sequence_nr()
            kept = self._derivative = derivative(x)  # type: ignore[attr-defined]
            keep_saved(kept, since)  # (shared by the graphs of later passes: no pass may free it)
        return [scale(grad_outputs[0], kept)]
    return apply_scaled


def _binary_apply(rule_x: Callable[..., Any], read_x: tuple[int, ...], rule_y: Callable[..., Any],
                  read_y: tuple[int, ...]) -> Apply:
    """``apply`` of a two-input, one-output op (mul, add, matmul, ...): a rule runs only for an input that
    needs a gradient. The commonest shapes of op get their own function: nothing saved (add, sub), and each
    rule reading one saved value (mul, matmul), where values that need no check (numbers) are read as saved."""
    if not read_x and not read_y:
        def apply_reading_nothing(self: Node, grad_outputs: list[Any], as_tensors: bool) -> list[Any]:
            g = grad_outputs[0]
            edges = self._edges
            return [None if edges[0][0] is None else rule_x(g), None if edges[1][0] is None else rule_y(g)]
        return apply_reading_nothing

    if len(read_x) == 1 and len(read_y) == 1:
        ix, iy = read_x[0], read_y[0]

        def apply_reading_one_each(self: Node, grad_outputs: list[Any], as_tensors: bool) -> list[Any]:
            values = self._saved
            versions = self._versions
            if versions is not UNCHECKED_PAIR or values.__class__ is not tuple:
                values = _unchanged_pair(values, versions, as_tensors) or self.unpack_saved(as_tensors)
            g = grad_outputs[0]
            edges = self._edges
            return [None if edges[0][0] is None else rule_x(g, values[ix]),
                    None if edges[1][0] is None else rule_y(g, values[iy])]
        return apply_reading_one_each

    def apply(self: Node, grad_outputs: list[Any], as_tensors: bool) -> list[Any]:
        values = self.unpack_saved(as_tensors) if self._saved else ()
        g = grad_outputs[0]
        edges = self._edges
        return [None if edges[0][0] is None else _call(rule_x, g, values, read_x),
                None if edges[1][0] is None else _call(rule_y, g, values, read_y)]
    return apply


def _unchanged_pair(values: Any, versions: Any, as_tensors: bool) -> tuple[Any, Any] | None:
    """Two saved values, each a number or None (version None) or a Tensor still at its saved version (an int),
    as the rules read them; None when anything else (a freed node, a changed Tensor...) needs ``unpack_saved``."""
    if values.__class__ is not tuple or versions.__class__ is not tuple or len(values) != 2:
        return None
    a, b = values
    va, vb = versions
    if va is not None:
        if va.__class__ is not int or a.__class__ is not Tensor or a._version_counter[0] != va:
            return None
        if not as_tensors:
            a = a.data
    if vb is not None:
        if vb.__class__ is not int or b.__class__ is not Tensor or b._version_counter[0] != vb:
            return None
        if not as_tensors:
            b = b.data
    return a, b


def _call(rule: Any, g: Any, values: Any, read: tuple[int, ...]) -> Any:
    """``rule(g, *the saved values it reads)``, without building a list for up to three of them."""
    n = len(read)
    if n == 1:
        return rule(g, values[read[0]])
    if n == 2:
        return rule(g, values[read[0]], values[read[1]])
    if n == 3:  # (sum's shape, dim, keepdim)
        return rule(g, values[read[0]], values[read[1]], values[read[2]])
    return rule(g, *[values[i] for i in read]) if n else rule(g)


class _SequenceOpNode(_OpNode):
    """A node whose op takes a sequence of tensors (cat, stack, einsum): one edge per element."""

    __slots__ = ()

    def apply(self, grad_outputs: list[Any], as_tensors: bool) -> list[Any]:
        values = self.unpack_saved(as_tensors) if self._saved else ()
        g = self._gradient(grad_outputs)
        (rule, slot, idx), = self._rules
        if not callable(rule):
            raise _missing(self._spec, slot)
        grads = list(rule(g, *[values[i] for i in idx]))
        return [gi if edge[0] is not None else None for gi, edge in zip(grads, self._edges)]
