"""The table-driven op test: every registered op has samples, and each passes gradcheck and gradgradcheck."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.check import gradcheck, gradgradcheck
from funcgrad.ops.registry import OPS
from tests.ops.samples import SAMPLES, S

CASES = [pytest.param(name, case, id=f"{name}-{i}") for name in sorted(SAMPLES)
         for i, case in enumerate(SAMPLES[name])]


def leaves(case: S) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The sample's args with float arrays turned into float64 leaves that require grad."""
    def convert(a: Any) -> Any:
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            return fg.tensor(a, dtype=np.float64, requires_grad=True)
        if isinstance(a, np.ndarray):
            return fg.tensor(a)
        return a
    return tuple(convert(a) for a in case.args), {k: convert(v) for k, v in case.kwargs.items()}


def call(name: str, case: S) -> tuple[Any, tuple[Any, ...]]:
    args, kwargs = leaves(case)
    keys = list(kwargs)
    n = len(args)

    def fn(*inputs: Any) -> Any:
        return getattr(fg, name)(*inputs[:n], **dict(zip(keys, inputs[n:])))

    return fn, args + tuple(kwargs[k] for k in keys)


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_has_samples(name: str) -> None:
    assert SAMPLES.get(name), f"op '{name}' has no samples in tests/ops/samples.py"


@pytest.mark.parametrize("name,case", CASES)
def test_gradcheck(name: str, case: S) -> None:
    fn, inputs = call(name, case)
    if not OPS[name].differentiable:
        out = fn(*inputs)
        for o in out if isinstance(out, tuple) else (out,):
            assert not o.requires_grad and o.grad_fn is None
        return
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("name,case", CASES)
def test_gradgradcheck(name: str, case: S) -> None:
    if not OPS[name].differentiable:
        pytest.skip("no derivative")
    fn, inputs = call(name, case)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("name,case", CASES)
def test_arrays_in_arrays_out(name: str, case: S) -> None:
    """Called with plain arrays an op returns exactly what its NumPy kernel returns."""
    out = getattr(fg, name)(*case.args, **case.kwargs)
    assert not isinstance(out, fg.Tensor) and not (isinstance(out, tuple) and isinstance(out[0], fg.Tensor))
