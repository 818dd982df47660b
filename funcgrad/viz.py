"""Pictures of the backward graph: Graphviz DOT text, and files rendered from it by the ``dot`` program.

``to_dot`` walks ``grad_fn`` and ``next_functions`` from the given tensors and draws one box per node
(grey), per leaf (blue, named from ``params``, with its shape) and per output (green); an edge goes from
the producer to the consumer, labelled with the ``input_nr`` of its ``next_functions`` entry, so the
picture reads in forward order. Writing DOT needs nothing; ``render`` needs Graphviz installed.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from funcgrad.core.graph import FREED, AccumulateGrad, Node
from funcgrad.core.tensor import Tensor

__all__ = ["to_dot", "render"]

_INSTALL_HINT = ("rendering needs Graphviz's `dot` program, which is not on PATH: install Graphviz (e.g. "
                 "`apt install graphviz`, `brew install graphviz` or `conda install graphviz`), or write "
                 "to_dot(...) to a .dot file and render it elsewhere")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shape(value: Any) -> str:
    return str(tuple(np.shape(value)))


class _Dot:
    """DOT statements under construction, with one id per drawn object."""

    def __init__(self) -> None:
        self.lines = ["digraph {", '  node [shape=box, style=filled, fillcolor=lightgrey, fontname=monospace, '
                                   'fontsize=11]']
        self.ids: dict[Hashable, str] = {}

    def box(self, key: Hashable, label: str, color: str | None = None) -> str:
        """Draw the object ``key`` stands for (once); return its id."""
        ident = self.ids.get(key)
        if ident is None:
            ident = self.ids[key] = f"n{len(self.ids)}"
            fill = f", fillcolor={color}" if color else ""
            self.lines.append(f"  {ident} [label={_quote(label)}{fill}]")
        return ident

    def edge(self, source: str, target: str, label: str | None = None, dashed: bool = False) -> None:
        """Draw an edge ``source -> target``."""
        attrs = [f"label={_quote(label)}"] if label is not None else []
        attrs += ["style=dashed"] if dashed else []
        self.lines.append(f"  {source} -> {target}" + (f" [{', '.join(attrs)}]" if attrs else ""))

    def text(self) -> str:
        return "\n".join([*self.lines, "}"]) + "\n"


def _saved_values(node: Node) -> list[tuple[str, Any]]:
    """The node's saved values with their names (the rule's names for table ops, ``saved_tensors[i]`` else)."""
    saved = node._saved
    if saved is FREED:
        return [("saved values", "freed")]
    spec = getattr(node, "_spec", None)
    names = spec.saved_names if spec is not None else [f"saved_tensors[{i}]" for i in range(len(saved))]
    return [(n, v) for n, v in zip(names, saved) if v is not None]


def _describe_saved(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return str(value)  # a saved shape
    return _shape(getattr(value, "data", value))


def to_dot(tensor_or_tensors: Tensor | Sequence[Tensor], params: Mapping[str, Tensor] | None = None,
           show_saved: bool = False) -> str:
    """Graphviz DOT text of the backward graph that ends in the given tensors.

    Args:
        tensor_or_tensors: the outputs to draw the graph of.
        params: names for leaf tensors (e.g. ``dict(model.named_parameters())``); others show their shape only.
        show_saved: also draw each node's saved values (name and shape), dashed.

    Returns:
        The DOT source; render it with ``render`` or any Graphviz tool.

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.viz import to_dot
        >>> a = fg.tensor([1.0, 2.0], requires_grad=True)
        >>> print(to_dot((a * 2).sum(), params={"a": a}))  # doctest: +NORMALIZE_WHITESPACE
        digraph {
          node [shape=box, style=filled, fillcolor=lightgrey, fontname=monospace, fontsize=11]
          n0 [label="output 0\\n()", fillcolor=darkolivegreen1]
          n1 [label="SumBackward0"]
          n1 -> n0
          n2 [label="MulBackward0"]
          n2 -> n1 [label="0"]
          n3 [label="AccumulateGrad"]
          n3 -> n2 [label="0"]
          n4 [label="a\\n(2,)", fillcolor=lightblue]
          n4 -> n3
        }
    """
    outputs = [tensor_or_tensors] if isinstance(tensor_or_tensors, Tensor) else list(tensor_or_tensors)
    names = {id(t): name for name, t in (params or {}).items()}
    dot = _Dot()
    stack: list[Node] = []
    for i, out in enumerate(outputs):
        ident = dot.box(id(out), f"output {i}\n{_shape(out.data)}", "darkolivegreen1")
        if out.grad_fn is not None:
            stack.append(out.grad_fn)
            dot.edge(dot.box(id(out.grad_fn), out.grad_fn.name()), ident)
    seen: set[int] = set()
    while stack:  # iterative: graphs may be deep
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        ident = dot.box(id(node), node.name())
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            label = f"{names[id(leaf)]}\n{_shape(leaf.data)}" if id(leaf) in names else _shape(leaf.data)
            dot.edge(dot.box(id(leaf), label, "lightblue"), ident)
        if show_saved and node._saved != ():
            for name, value in _saved_values(node):
                dot.edge(dot.box((id(node), name), f"{name}\n{_describe_saved(value)}", "orange"), ident, dashed=True)
        for producer, input_nr in node.next_functions:
            if producer is not None:
                dot.edge(dot.box(id(producer), producer.name()), ident, str(input_nr))
                stack.append(producer)
    return dot.text()


def render(tensor_or_tensors: Tensor | Sequence[Tensor], path: str | os.PathLike[str],
           params: Mapping[str, Tensor] | None = None, show_saved: bool = False) -> None:
    """Draw the backward graph into ``path`` with Graphviz, in the format its suffix names (svg, png, pdf, ...).

    Args:
        tensor_or_tensors, params, show_saved: as for ``to_dot``.
        path: the file to write, e.g. ``"graph.svg"``.

    Raises:
        ValueError: ``path`` has no suffix to take the format from.
        RuntimeError: Graphviz's ``dot`` is not installed, or it failed.
    """
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".")
    if not fmt:
        raise ValueError(f"cannot tell the format of {os.fspath(path)!r}: give it a suffix such as .svg, .png or .pdf")
    program = shutil.which("dot")
    if program is None:
        raise RuntimeError(_INSTALL_HINT)
    done = subprocess.run([program, f"-T{fmt}", "-o", os.fspath(path)], input=to_dot(tensor_or_tensors, params,
                          show_saved), capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"Graphviz's dot failed to render {os.fspath(path)!r}: {done.stderr.strip()}")
