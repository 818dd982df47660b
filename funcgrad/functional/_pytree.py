"""Pytrees: nested tuples, lists and dicts (and None) whose leaves are arrays, Tensors or scalars.

``tree_flatten`` lists the leaves in order and returns a ``TreeSpec`` that ``tree_unflatten`` uses to
rebuild the nesting; ``ravel`` goes one step further, to one flat float64 vector (what SciPy wants).
None is an empty node, as in JAX; dicts keep their insertion order, as in torch.func. Custom node
types are not registered here: any other object is a leaf.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

__all__ = ["TreeSpec", "tree_flatten", "tree_unflatten", "tree_map", "ravel"]


class TreeSpec(NamedTuple):
    """How to rebuild a tree from its leaves: the node type, its dict keys, the children's specs."""

    kind: type | None  # None marks a leaf
    keys: tuple[Any, ...]  # dict keys in order; () for other nodes
    children: tuple[TreeSpec, ...]
    num_leaves: int

    def __str__(self) -> str:
        if self.kind is None:
            return "*"
        if self.kind is type(None):
            return "None"
        inner = ", ".join(f"{k!r}: {c}" if self.keys else str(c)
                          for k, c in zip(self.keys or range(len(self.children)), self.children))
        return f"{self.kind.__name__}({inner})"


LEAF = TreeSpec(None, (), (), 1)


def tree_flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and the spec that rebuilds it.

    Example:
        >>> leaves, spec = tree_flatten({"w": (1.0, 2.0), "b": None})
        >>> leaves, str(spec)
        ([1.0, 2.0], "dict('w': tuple(*, *), 'b': None)")
    """
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> TreeSpec:
    kind = type(tree)
    if kind is tuple or kind is list:  # the commonest tree, a plain tuple (argnums) or list of leaves
        for v in tree:
            if v is None or isinstance(v, _NODES):
                break
        else:
            leaves.extend(tree)
            return _flat_spec(kind, len(tree))
    if isinstance(tree, dict):
        keys, values = tuple(tree), tuple(tree.values())
    elif isinstance(tree, tuple | list) or tree is None:
        keys, values = (), tuple(tree or ())
    else:
        leaves.append(tree)
        return LEAF
    children = tuple([_flatten(v, leaves) for v in values])
    return TreeSpec(kind, keys, children, sum([c.num_leaves for c in children]))


_NODES = (dict, tuple, list)  # (and None): what is not a leaf
_FLAT: dict[tuple[type | None, int], TreeSpec] = {}  # the spec of a plain tuple or list of n leaves, one per (type, n)


def _flat_spec(kind: type, n: int) -> TreeSpec:
    spec = _FLAT.get((kind, n))
    if spec is None:
        spec = _FLAT[kind, n] = TreeSpec(kind, (), (LEAF,) * n, n)
    return spec


def tree_unflatten(spec: TreeSpec, leaves: list[Any]) -> Any:
    """Rebuild the tree described by ``spec`` around ``leaves`` (inverse of ``tree_flatten``).

    Example:
        >>> leaves, spec = tree_flatten([1, (2, 3)])
        >>> tree_unflatten(spec, [x * 10 for x in leaves])
        [10, (20, 30)]
    """
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"tree_unflatten: the tree {spec} has {spec.num_leaves} leaves, got {len(leaves)}")
    if _FLAT.get((spec.kind, spec.num_leaves)) is spec:  # a plain tuple or list of leaves
        return spec.kind(leaves)  # type: ignore[misc]
    return _build(spec, iter(leaves))


def _build(spec: TreeSpec, leaves: Iterator[Any]) -> Any:
    if spec.kind is None:
        return next(leaves)
    children = [_build(c, leaves) for c in spec.children]
    if spec.kind is type(None):
        return None
    if spec.keys:
        return spec.kind(zip(spec.keys, children))
    if hasattr(spec.kind, "_fields"):  # a namedtuple takes its fields as arguments
        return spec.kind(*children)
    return spec.kind(children)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with ``fn`` applied to every leaf.

    Example:
        >>> tree_map(lambda x: x + 1, {"a": 1, "b": [2, 3]})
        {'a': 2, 'b': [3, 4]}
    """
    leaves, spec = tree_flatten(tree)
    return tree_unflatten(spec, [fn(leaf) for leaf in leaves])


def ravel(tree: Any) -> tuple[np.ndarray, Callable[[Any], Any]]:
    """Concatenate the leaves of ``tree`` into one float64 vector; return it and its inverse.

    The inverse (``unravel``) slices and reshapes, so it works on NumPy vectors and on Tensors
    alike (differentiably for Tensors).

    Returns:
        ``(flat, unravel)``: ``flat`` has shape ``(total number of elements,)``.

    Example:
        >>> flat, unravel = ravel({"w": np.ones((2, 2)), "b": 0.5})
        >>> flat
        array([1. , 1. , 1. , 1. , 0.5])
        >>> unravel(flat)["w"].shape
        (2, 2)
    """
    leaves, spec = tree_flatten(tree)
    arrays = [np.asarray(leaf, dtype=np.float64) for leaf in leaves]
    shapes = [a.shape for a in arrays]
    ends = np.cumsum([a.size for a in arrays]).tolist()
    flat = np.concatenate([a.ravel() for a in arrays]) if arrays else np.zeros(0)

    def unravel(vector: Any) -> Any:
        starts = [0, *ends[:-1]]
        return tree_unflatten(spec, [vector[s:e].reshape(shape) for s, e, shape in zip(starts, ends, shapes)])

    return flat, unravel
