"""Smoke test of ``benchmarks/`` at tiny sizes: every variant computes the same gradient, and the harness
runs end to end. Correctness only — timings are never asserted in tests."""
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from benchmarks import CHECKS, HIGHER_ORDER, TRANSFORMS, WORKLOADS, python_floor
from benchmarks.harness import Workload, measure, run, table, target_report, verify


def _outputs(workload: Workload, frameworks: frozenset[str] | None) -> dict[str, list[np.ndarray]]:
    variants = workload.build(workload.small_sizes, frameworks)
    return {label: list(runner()) for label, runner in variants.items()}


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda wl: wl.name)
def test_funcgrad_matches_the_numpy_gradient(workload: Workload) -> None:
    """torch and autograd are left out to keep this fast; every benchmark run checks them before timing."""
    outputs = _outputs(workload, frozenset({"funcgrad"}))
    assert {"funcgrad", workload.reference} <= set(outputs)
    assert not [label for label in outputs if label.startswith(("torch", "autograd"))]
    verify(workload, outputs)


@pytest.mark.parametrize("workload", [*TRANSFORMS, *HIGHER_ORDER, *CHECKS], ids=lambda wl: wl.name)
def test_every_row_agrees_and_every_target_names_a_row(workload: Workload) -> None:
    """With torch too (when installed): its rows agree, and the targets' references are row labels."""
    pytest.importorskip("torch")
    outputs = _outputs(workload, None)
    verify(workload, outputs)
    assert {ref for target in workload.targets for ref in target.references} <= set(outputs)


def test_a_row_label_selects_that_row_and_the_reference() -> None:
    """What ``--profile 'fg loop'`` relies on."""
    jacobian = next(wl for wl in WORKLOADS if wl.name == "jacobian")
    assert set(jacobian.build(jacobian.small_sizes, frozenset({"fg loop"}))) == {"fg loop", "numpy"}


def test_verify_rejects_a_gradient_off_in_the_sixth_digit() -> None:
    workload = WORKLOADS[0]
    outputs = _outputs(workload, frozenset({"funcgrad"}))
    outputs["funcgrad"] = [g * (1 + 1e-6) for g in outputs["funcgrad"]]
    with pytest.raises(AssertionError, match="funcgrad differs from numpy"):
        verify(workload, outputs)


def test_run_prints_the_table_and_skips_targets_of_missing_variants() -> None:
    workload = replace(WORKLOADS[0], sizes=WORKLOADS[0].small_sizes)
    results = run([workload], repeat=2, min_sample=0.0, frameworks=frozenset({"funcgrad"}), echo=lambda _: None)
    assert [len(s) for s in results[0].samples.values()] == [2, 2]
    assert "funcgrad" in table(results) and "numpy" in table(results)
    assert target_report(results).startswith("SKIP")


@pytest.mark.parametrize("name", ["tiny-chain", "deep-chain"])
def test_the_python_floor_tape_differentiates_its_chains(name: str) -> None:
    """The minimal tape the per-op profile is read against computes the same gradient as funcgrad."""
    chain, n, _, _ = python_floor.CHAINS[name]
    data = np.random.default_rng(1).standard_normal(n)
    leaf = python_floor.Var(data)
    floor_grad = python_floor.gradient(chain(leaf, 7), leaf)
    x = fg.tensor(data, requires_grad=True)
    y = x
    for _ in range(7):
        y = (fg.sin(y) * 1.01 + 0.1) if name == "tiny-chain" else (y * 0.9999 + 0.0001)
    y.sum().backward()
    np.testing.assert_allclose(floor_grad, x.grad.data, rtol=1e-12)


def test_measure_verifies_first_calls_and_times_jax_rows_apart() -> None:
    """A runner may change state (an SGD step): each row is verified on its first call, the reference's included
    (the reference called twice made convnet-step's check fail); rows starting with "jax" are timed after the
    others' rounds."""
    calls: list[str] = []

    def counter(label: str) -> Any:
        count = [0]

        def runner() -> list[np.ndarray]:
            count[0] += 1
            calls.append(label)
            return [np.array(float(count[0]))]
        return runner

    labels = ("numpy", "funcgrad", "jax jet", "torch")
    workload = Workload("stateful", "a counter", lambda sizes, frameworks: {k: counter(k) for k in labels}, {}, {})
    result = measure(workload, workload.build({}, None), repeat=2, min_sample=0.0)
    assert set(result.samples) == set(labels)
    jax = [i for i, label in enumerate(calls) if label == "jax jet"]
    assert max(i for i, label in enumerate(calls) if label != "jax jet") < min(jax)  # (verify checked first calls)
