"""The argument convention of the JAX-style transforms, in one place: argnums, has_aux, pytrees.

A ``Call`` is one call of the user's function seen as a function of the flat list of leaves of
the differentiated arguments: it checks and converts those leaves to float Tensors, substitutes
them back into the arguments, splits off ``aux``, flattens the output, and converts results back
(NumPy arrays when no differentiated leaf was a Tensor, Tensors otherwise). The transforms never
touch ``argnums`` or trees themselves.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.tensor import Tensor
from funcgrad.functional._pytree import TreeSpec, tree_flatten, tree_map, tree_unflatten

Argnums = int | tuple[int, ...]


def _normalize(argnums: Argnums, nargs: int, caller: str) -> Argnums:
    if isinstance(argnums, tuple | list):  # (an int in range as it is, without a call)
        normal = tuple([a if type(a) is int and 0 <= a < nargs else _normalize(a, nargs, caller)  # type: ignore[misc]
                        for a in argnums])
        if len(set(normal)) != len(normal):  # a repeated argument got zeros in all but one place
            raise RuntimeError(f"{caller}: argnums elements must be unique, got {normal}")
        return normal  # type: ignore[return-value]
    if not isinstance(argnums, int | np.integer):
        raise TypeError(f"{caller}: argnums must be an int or a tuple of ints, got {type(argnums).__name__}")
    if not -nargs <= argnums < nargs:
        raise ValueError(f"{caller}: argnums={argnums} is out of range for a call with {nargs} positional "
                         f"argument(s)")
    return int(argnums) % nargs


def _float_tensor(leaf: Any, caller: str, index: int) -> Tensor:
    t = leaf if isinstance(leaf, Tensor) else Tensor(leaf)
    if t.data.dtype.kind not in "fc":
        raise TypeError(f"{caller} requires real- or complex-valued inputs, but differentiated leaf {index} has "
                        f"dtype {t.dtype}: pass floats instead (e.g. 1.0, not 1; np.asarray(x, dtype=float))")
    return t


class Call:
    """``f(*args)`` as a function of the flat leaves of ``args[argnums]``.

    Args:
        f: the user's function.
        args: its positional arguments.
        argnums: which arguments are differentiated (an int, or a tuple: a tuple of arguments).
        has_aux: ``f`` returns ``(output, aux)``; aux is kept aside, not differentiated.
        caller: the transform's name, for error messages.
    """

    def __init__(self, f: Callable[..., Any], args: Sequence[Any], argnums: Argnums, has_aux: bool,
                 caller: str) -> None:
        self.f, self.args, self.has_aux, self.caller = f, tuple(args), has_aux, caller
        self.argnums = _normalize(argnums, len(self.args), caller)
        diff = (tuple([self.args[i] for i in self.argnums]) if isinstance(self.argnums, tuple)
                else self.args[self.argnums])
        leaves, self.in_spec = tree_flatten(diff)
        self.inputs = [_float_tensor(leaf, caller, i) for i, leaf in enumerate(leaves)]
        self.made = [x is not leaf for x, leaf in zip(self.inputs, leaves)]  # Tensors made here, from arrays
        self.numpy_out = all(self.made)  # no differentiated leaf was a Tensor
        self.out_spec: TreeSpec | None = None
        self.aux: Any = None

    def __call__(self, inputs: Sequence[Tensor]) -> list[Tensor]:
        """Run ``f`` with ``inputs`` as the differentiated leaves; return its output leaves as Tensors."""
        diff = tree_unflatten(self.in_spec, list(inputs))
        args = list(self.args)
        if isinstance(self.argnums, tuple):
            for i, value in zip(self.argnums, diff):
                args[i] = value
        else:
            args[self.argnums] = diff
        out = self.f(*args)
        if self.has_aux:
            if not isinstance(out, tuple | list) or len(out) != 2:
                raise TypeError(f"{self.caller}(f, has_aux=True) requires f to return a pair (output, aux), "
                                f"got {type(out).__name__}")
            out, self.aux = out
        leaves, self.out_spec = tree_flatten(out)
        return [leaf if isinstance(leaf, Tensor) else Tensor(leaf) for leaf in leaves]

    def export(self, t: Any, keep_graph: bool) -> Any:
        """A result leaf as the caller wants it: attached when ``keep_graph`` (an outer transform traces it), else
        an array when no differentiated leaf was a Tensor, else a detached Tensor."""
        if not isinstance(t, Tensor):
            return t
        if not keep_graph:
            if DISPATCH.active:  # a layer (jet) may carry a series for it, which the constant would drop
                DISPATCH.note_converted(t, "returned as a constant by an inner transform (funcgrad.func's jvp, "
                                           "jacfwd, grad...: Taylor mode does not run through them)")
            return t.data if self.numpy_out else t.detach()
        return t

    def aux_tree(self, keep_graph: bool) -> Any:
        """The ``aux`` of the last call, its Tensor leaves exported as results are."""
        return tree_map(lambda t: self.export(t, keep_graph), self.aux)

    def with_aux(self, result: Any, keep_graph: bool) -> Any:
        """``result``, or ``(result, aux)`` when ``has_aux``."""
        return (result, self.aux_tree(keep_graph)) if self.has_aux else result

    def outputs_tree(self, leaves: Sequence[Tensor], keep_graph: bool) -> Any:
        """Leaves shaped like ``f``'s output (values, tangents)."""
        assert self.out_spec is not None, "call the function first"
        return tree_unflatten(self.out_spec, [self.export(t, keep_graph) for t in leaves])

    def inputs_tree(self, leaves: Sequence[Tensor], keep_graph: bool) -> Any:
        """Leaves shaped like the differentiated arguments (gradients, cotangents)."""
        return tree_unflatten(self.in_spec, [self.export(t, keep_graph) for t in leaves])

    def jacobian_tree(self, blocks: Sequence[Sequence[Tensor]], keep_graph: bool) -> Any:
        """Blocks ``[i][j]`` nested as the output tree outside, the argnums tree inside."""
        assert self.out_spec is not None, "call the function first"
        return tree_unflatten(self.out_spec, [self.inputs_tree(row, keep_graph) for row in blocks])

    def match(self, tree: Any, spec: TreeSpec, refs: Sequence[Tensor], what: str) -> list[Tensor]:
        """The leaves of ``tree`` (tangents, cotangents) as Tensors, checked against ``spec`` and ``refs``."""
        leaves, given = tree_flatten(tree)
        if given != spec:
            raise ValueError(f"{self.caller}: {what}s must have the same tree structure as their "
                             f"{'primals' if what == 'tangent' else 'outputs'}: expected {spec}, got {given}")
        tensors = [_float_tensor(leaf, self.caller, i) for i, leaf in enumerate(leaves)]
        for i, (t, ref) in enumerate(zip(tensors, refs)):
            if t.shape != ref.shape:
                raise ValueError(f"{self.caller}: {what} {i} has shape {t.shape} but its "
                                 f"{'primal' if what == 'tangent' else 'output'} has shape {ref.shape}; "
                                 f"each {what} must have the shape of the value it pairs with")
        return tensors
