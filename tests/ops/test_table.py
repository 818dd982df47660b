"""The table-driven op test: every registered op has samples, and each passes gradcheck and gradgradcheck."""
from __future__ import annotations

import inspect
import pydoc
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import ops
from funcgrad.check import gradcheck, gradgradcheck
from funcgrad.ops.registry import OPS
from tests.ops.samples import SAMPLES, S

CASES = [pytest.param(name, case, id=f"{name}-{i}") for name in sorted(SAMPLES)
         for i, case in enumerate(SAMPLES[name])]


def _convert(a: Any) -> Any:
    if isinstance(a, np.ndarray) and a.dtype.kind in "fc":
        return fg.tensor(a, dtype=np.float64 if a.dtype.kind == "f" else np.complex128, requires_grad=True)
    if isinstance(a, np.ndarray):
        return fg.tensor(a)
    return a


def call(name: str, case: S) -> tuple[Any, tuple[Any, ...]]:
    """A function of flat inputs that calls the op on the sample, and those inputs (float arrays as leaves;
    a list of arrays, as cat's, contributes one input per element)."""
    return call_with(getattr(ops, name), case)


def call_with(op: Any, case: S) -> tuple[Any, tuple[Any, ...]]:
    """As ``call``, for any callable ``op`` (a NumPy function given Tensors, say)."""
    args = list(case.args) + list(case.kwargs.values())
    sizes = [len(a) if isinstance(a, list | tuple) and a and isinstance(a[0], np.ndarray) else -1 for a in args]
    flat: list[Any] = []
    for a, n in zip(args, sizes):
        flat.extend([_convert(e) for e in a] if n >= 0 else [_convert(a)])
    keys = list(case.kwargs)
    n_pos = len(case.args)

    def fn(*inputs: Any) -> Any:
        rebuilt, i = [], 0
        for n in sizes:
            rebuilt.append(list(inputs[i:i + n]) if n >= 0 else inputs[i])
            i += max(n, 1) if n >= 0 else 1
        return op(*rebuilt[:n_pos], **dict(zip(keys, rebuilt[n_pos:])))

    return fn, tuple(flat)


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
    out = getattr(ops, name)(*case.args, **case.kwargs)
    assert not isinstance(out, fg.Tensor) and not (isinstance(out, tuple) and isinstance(out[0], fg.Tensor))


def test_ops_show_their_forward_signature_and_doc() -> None:
    """Issue 12: help(fg.sum) / help(Tensor.sum) shows (x, dim=None, keepdim=False), not (*args, **kwargs)."""
    for name, spec in OPS.items():
        fn = getattr(ops, name)
        signature = inspect.signature(fn)
        assert tuple(signature.parameters) == spec.params, name
        assert fn.__doc__, name
        for p, default in zip(signature.parameters.values(), spec.defaults):
            assert p.default is inspect.Parameter.empty or p.default == default or p.default is default, name
    assert str(inspect.signature(fg.Tensor.sum)) == "(x, dim=None, keepdim=False)"
    shown = pydoc.render_doc(fg.var, renderer=pydoc.plaintext)
    assert "var(x, dim=None, correction=1, keepdim=False, *, unbiased=None)" in shown
