"""The table-driven one-pass Jacobian test: for every differentiable op on every sample, a batched pass
seeded with the structured identity (``BatchedDiagonal`` cotangents in reverse mode, tangents in forward
mode) equals the one seeded with the dense identity, whatever mix of structured operations and dense
fallbacks the op's rules go through; in reverse mode both equal the loop of unbatched passes."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.core.structured import identity_seed
from tests.ops.samples import S
from tests.ops.test_table_jvp import DIFFERENTIABLE, _jvp, _outputs, _setup


def _dense_identity(shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    return np.eye(n).reshape((n, *shape))


@pytest.mark.parametrize("name,case", DIFFERENTIABLE)
def test_reverse_structured_seed_equals_dense(name: str, case: S) -> None:
    fn, inputs, floats, _ = _setup(name, case, 0)
    results = []
    for seed in (identity_seed, _dense_identity):
        leaves = tuple(fg.tensor(a.data, requires_grad=True) if i in floats else a for i, a in enumerate(inputs))
        out = _outputs(fn(*leaves))[0]
        grads = fg.autograd.grad(out, [leaves[i] for i in floats], seed(out.shape) if seed is _dense_identity
                                 else seed(out.shape, out.dtype), is_grads_batched=True, materialize_grads=True)
        assert all(type(g.data) is np.ndarray for g in grads)
        results.append([g.data for g in grads])
    leaves = tuple(fg.tensor(a.data, requires_grad=True) if i in floats else a for i, a in enumerate(inputs))
    out = _outputs(fn(*leaves))[0]
    rows = [fg.autograd.grad(out, [leaves[i] for i in floats], row, retain_graph=True, materialize_grads=True)
            for row in _dense_identity(out.shape)]  # the unbatched loop, one row of the Jacobian at a time
    results.append([np.stack([r[j].data for r in rows]) if rows else None for j in range(len(floats))])
    for structured, dense, loop in zip(*results):
        np.testing.assert_allclose(structured, dense, rtol=1e-12, atol=1e-12)
        if loop is not None:
            np.testing.assert_allclose(dense, loop, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,case", DIFFERENTIABLE)
def test_forward_structured_tangents_equal_dense(name: str, case: S) -> None:
    fn, inputs, floats, _ = _setup(name, case, 0)
    first = floats[0]
    shape = inputs[first].shape
    n = int(np.prod(shape))
    structured = _jvp(fn, inputs, {first: identity_seed(shape, np.float64)}, (n,))
    dense = _jvp(fn, inputs, {first: _dense_identity(shape)}, (n,))
    for a, b in zip(structured, dense):
        assert type(a) is np.ndarray
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
