"""The table-driven jit test: for every differentiable op on every sample, a jitted function computing the
op's outputs, a gradient and a forward-over-reverse Hessian-vector product gives, on new inputs, exactly
what the plain function gives, whether the call replays a recording or runs plainly (guards, escapes)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.autograd import forward_ad as fwAD
from funcgrad.func import jit
from tests.ops.samples import S
from tests.ops.test_table_jvp import DIFFERENTIABLE, _outputs, _setup


def _derivatives(fn: Any, inputs: tuple[Any, ...], floats: list[int], u: list[np.ndarray]) -> Any:
    """``f(*float arrays)``: the op's outputs, the gradient of ``<u, outputs>`` and its derivative along ``u``'s
    first entries (forward over reverse), as arrays."""
    def f(*arrays: np.ndarray) -> list[np.ndarray]:
        with fwAD.dual_level():
            leaves = list(inputs)
            for k, i in enumerate(floats):
                leaves[i] = fwAD.make_dual(fg.tensor(arrays[k], requires_grad=True), np.ones_like(arrays[k]))
            outs = _outputs(fn(*leaves))
            total = sum(((o * w).sum().real for o, w in zip(outs, u)), fg.tensor(0.0))
            grads = fg.autograd.grad(total, [leaves[i] for i in floats], allow_unused=True, materialize_grads=True)
            hvps = [fwAD.unpack_dual(g).tangent for g in grads]
            values = [fwAD.unpack_dual(t).primal.detach().numpy() for t in (*outs, *grads)]
            return values + [np.zeros(g.shape) if t is None else t.detach().numpy() for g, t in zip(grads, hvps)]
    return f


@pytest.mark.parametrize("name,case", DIFFERENTIABLE)
def test_jit_equals_the_plain_call(name: str, case: S) -> None:
    fn, inputs, floats, rng = _setup(name, case, 0)
    if not floats:
        pytest.skip("no float inputs")
    u = [rng.normal(size=o.shape) for o in _outputs(fn(*inputs))]
    f = _derivatives(fn, inputs, floats, u)
    jitted = jit(f)
    first = [inputs[i].numpy() for i in floats]
    for got, expected in zip(jitted(*first), f(*first)):  # the recording call
        np.testing.assert_array_equal(got, expected)
    moved = [a * (1 + 1e-3 * rng.uniform(-1, 1, size=a.shape)) for a in first]  # same signature, new values
    with np.errstate(all="ignore"):
        for got, expected in zip(jitted(*moved), f(*moved)):
            np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
