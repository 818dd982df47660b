"""funcgrad.viz: DOT text of the backward graph (nodes, named leaves with shapes, edges with input_nr,
saved values) and rendering through Graphviz when it is installed."""
from __future__ import annotations

import re
import shutil

import pytest

import funcgrad as fg
from funcgrad import viz
from funcgrad.autograd import Function


def parse(dot: str) -> tuple[dict[str, str], set[tuple[str, str, str | None]]]:
    """The boxes' labels by id, and the edges as (source, target, edge label) with each box named by its
    label, an AccumulateGrad by ``AccumulateGrad(<its leaf's label>)``."""
    labels = dict(re.findall(r'^  (n\d+) \[label="((?:[^"\\]|\\.)*)"', dot, re.M))
    raw = re.findall(r'^  (n\d+) -> (n\d+)(?: \[label="(\d+)")?', dot, re.M)
    names = dict(labels)
    for a, b, _ in raw:
        if labels[b] == "AccumulateGrad":
            names[b] = f"AccumulateGrad({labels[a]})"
    return labels, {(names[a], names[b], label or None) for a, b, label in raw}


@pytest.fixture()
def seeds_graph() -> tuple[fg.Tensor, dict[str, fg.Tensor]]:
    """The seeds' graph: (A * B).exp() + E."""
    params = {"A": fg.ones((2, 3), requires_grad=True), "B": fg.ones((2, 3), requires_grad=True),
              "E": fg.ones(3, requires_grad=True)}
    return (params["A"] * params["B"]).exp() + params["E"], params


def test_seeds_graph_nodes_and_edges(seeds_graph) -> None:
    out, params = seeds_graph
    dot = viz.to_dot(out, params=params)
    assert dot.startswith("digraph {") and dot.endswith("}\n")
    labels, edges = parse(dot)
    assert sorted(labels.values()) == sorted([
        "output 0\\n(2, 3)", "AddBackward0", "ExpBackward0", "MulBackward0", "AccumulateGrad", "AccumulateGrad",
        "AccumulateGrad", "A\\n(2, 3)", "B\\n(2, 3)", "E\\n(3,)"])
    assert edges == {
        ("AddBackward0", "output 0\\n(2, 3)", None),
        ("ExpBackward0", "AddBackward0", "0"),
        ("AccumulateGrad(E\\n(3,))", "AddBackward0", "0"),
        ("MulBackward0", "ExpBackward0", "0"),
        ("AccumulateGrad(A\\n(2, 3))", "MulBackward0", "0"),
        ("AccumulateGrad(B\\n(2, 3))", "MulBackward0", "0"),
        ("A\\n(2, 3)", "AccumulateGrad(A\\n(2, 3))", None),
        ("B\\n(2, 3)", "AccumulateGrad(B\\n(2, 3))", None),
        ("E\\n(3,)", "AccumulateGrad(E\\n(3,))", None),
    }


def test_leaves_without_a_name_show_their_shape(seeds_graph) -> None:
    out, _ = seeds_graph
    labels, _ = parse(viz.to_dot(out))
    assert sorted(v for v in labels.values() if v.startswith("(")) == ["(2, 3)", "(2, 3)", "(3,)"]


class Pair(Function):
    """Two outputs, so that edges leaving its node carry input_nr 0 and 1."""

    @staticmethod
    def forward(ctx, x):
        return x * 1, x * 2

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 + 2 * g2


def test_edge_labels_are_the_input_nr_of_multi_output_nodes() -> None:
    first, second = Pair.apply(fg.ones(2, requires_grad=True))
    labels, edges = parse(viz.to_dot([first * 2, second.exp()]))
    assert {("PairBackward", "MulBackward0", "0"), ("PairBackward", "ExpBackward0", "1")} <= edges
    assert {"output 0\\n(2,)", "output 1\\n(2,)"} <= set(labels.values())


def test_show_saved_draws_saved_values_and_frees(seeds_graph) -> None:
    out, params = seeds_graph
    dot = viz.to_dot(out, params=params, show_saved=True)
    labels, edges = parse(dot)
    assert ("out\\n(2, 3)", "ExpBackward0", None) in edges
    assert {("x\\n(2, 3)", "MulBackward0", None), ("y\\n(2, 3)", "MulBackward0", None)} <= edges
    assert "style=dashed" in dot
    out.sum().backward()
    _, edges = parse(viz.to_dot(out, show_saved=True))
    assert ("saved values\\nfreed", "ExpBackward0", None) in edges


def test_labels_are_escaped() -> None:
    x = fg.ones(2, requires_grad=True)
    assert 'label="say \\"hi\\"\\n(2,)"' in viz.to_dot(x * 2, params={'say "hi"': x})


def test_render_without_graphviz_says_how_to_install(seeds_graph, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="install Graphviz"):
        viz.render(seeds_graph[0], tmp_path / "graph.svg")
    with pytest.raises(ValueError, match="suffix"):
        viz.render(seeds_graph[0], tmp_path / "graph")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_render_svg(seeds_graph, tmp_path) -> None:
    out, params = seeds_graph
    viz.render(out, tmp_path / "graph.svg", params=params)
    assert "<svg" in (tmp_path / "graph.svg").read_text()
