"""The profiler: forward ops and backward nodes with call counts, self vs total time of nested calls,
record_function regions, the key_averages table, the Chrome trace, and nothing installed when off."""
from __future__ import annotations

import json
import time
from collections import Counter

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.autograd.profiler import EventList, profile, record_function
from funcgrad.core.dispatch import DISPATCH


def mlp_step() -> None:
    """A two-layer MLP, forward and backward."""
    rng = np.random.default_rng(0)
    w1 = fg.tensor(rng.normal(size=(4, 8)), requires_grad=True)
    b1 = fg.tensor(rng.normal(size=8), requires_grad=True)
    w2 = fg.tensor(rng.normal(size=(8, 3)), requires_grad=True)
    x = fg.tensor(rng.normal(size=(5, 4)))
    with record_function("forward"):
        h = fg.tanh(x @ w1 + b1)
        loss = fg.log_softmax(h @ w2, dim=1).sum()
    with record_function("backward"):
        loss.backward()


@pytest.fixture(scope="module")
def prof() -> profile:
    with profile(record_shapes=True) as p:
        mlp_step()
    return p


def test_forward_ops_and_backward_nodes_with_call_counts(prof: profile) -> None:
    events = prof.events()
    forward = Counter(e.name for e in events if e.kind == "op" and e.cpu_parent.name == "forward")
    assert forward == {"matmul": 2, "add": 1, "tanh": 1, "log_softmax": 1, "sum": 1}
    nodes = Counter(e.name for e in events if e.kind == "node")
    assert nodes == {"SumBackward0": 1, "LogSoftmaxBackward0": 1, "MatmulBackward0": 2, "TanhBackward0": 1,
                     "AddBackward0": 1, "AccumulateGrad": 3}
    averages = {e.key: e for e in prof.key_averages()}
    assert averages["MatmulBackward0"].count == 2 and averages["backward"].count == 1
    assert averages["matmul"].count == sum(e.name == "matmul" for e in events)  # backward rules' matmuls too


def test_ops_inside_backward_rules_count_toward_the_node(prof: profile) -> None:
    inside = [e for e in prof.events() if e.kind == "op" and e.cpu_parent.kind == "node"]
    assert inside  # e.g. the matmuls of MatmulBackward0
    for node in {e.cpu_parent for e in inside}:
        children = sum(e.cpu_time_total for e in prof.events() if e.cpu_parent is node)
        assert node.self_cpu_time_total == pytest.approx(node.cpu_time_total - children)


def test_self_and_total_time_of_nested_regions() -> None:
    with profile() as p:
        with record_function("outer"):
            with record_function("inner"):
                time.sleep(0.02)
    outer, inner = p.events()
    assert (outer.name, inner.name, inner.cpu_parent) == ("outer", "inner", outer)
    assert inner.self_cpu_time_total >= 20_000  # µs
    assert outer.cpu_time_total >= inner.cpu_time_total > outer.self_cpu_time_total
    assert outer.self_cpu_time_total + inner.self_cpu_time_total == pytest.approx(outer.cpu_time_total)
    assert p.self_cpu_time_total == pytest.approx(outer.cpu_time_total)


def test_table_columns_sorting_and_row_limit(prof: profile) -> None:
    averages = prof.key_averages()
    text = averages.table(sort_by="self_cpu_time_total", row_limit=4)
    lines = text.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                "CPU", "time", "avg", "#", "of", "Calls"]
    rows = lines[3:-2]
    assert len(rows) == 4
    top = sorted(averages, key=lambda e: e.self_cpu_time_total, reverse=True)[:4]
    assert [r.split()[0] for r in rows] == [e.key for e in top]
    assert lines[-1].startswith("Self CPU time total: ")
    assert len(averages.table(row_limit=0).splitlines()) == len(averages) + 5


def test_table_grouped_by_input_shape(prof: profile) -> None:
    text = prof.key_averages(group_by_input_shape=True).table(sort_by="count")
    assert "Input Shapes" in text
    assert any(line.split()[0] == "matmul" and line.endswith("[[5, 4], [4, 8]]") for line in text.splitlines())


def test_table_rejects_an_unknown_sort_key(prof: profile) -> None:
    with pytest.raises(ValueError, match="sort_by must be one of"):
        prof.key_averages().table(sort_by="cuda_time")


def test_chrome_trace_has_one_complete_event_per_call(prof: profile, tmp_path) -> None:
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    trace = json.loads(path.read_text())["traceEvents"]
    events = prof.events()
    assert len(trace) == len(events)
    assert [t["name"] for t in trace] == [e.name for e in events]
    assert all(t["ph"] == "X" and t["ts"] >= 0 and t["dur"] >= 0 for t in trace)
    assert {t["cat"] for t in trace} == {"cpu_op", "autograd", "user_annotation"}


def test_not_profiling_installs_nothing() -> None:
    with profile(enabled=False) as p:
        fg.tensor([1.0]) * 2
    assert p.events() == EventList()
    with record_function("nobody listens"):
        fg.tensor([1.0]) * 2
    assert not DISPATCH.active and DISPATCH.layers == []


def test_profiles_do_not_nest() -> None:
    with profile(), pytest.raises(RuntimeError, match="already running"), profile():
        pass
    assert not DISPATCH.active


def test_record_function_as_decorator() -> None:
    @record_function("step")
    def step() -> None:
        fg.tensor([1.0]) * 2

    with profile() as p:
        step()
        step()
    assert Counter(e.name for e in p.events()) == {"step": 2, "mul": 2}
