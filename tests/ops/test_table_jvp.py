"""The table-driven forward-mode test: every differentiable op's JVP, on every sample, agrees with
central finite differences, with its VJP (Re <u, J v> == Re <J* u, v>, complex samples included), and pushes a
batch of tangents exactly as a loop of single ones."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.autograd import forward_ad as fwAD
from funcgrad.ops.registry import OPS
from tests.ops.samples import S
from tests.ops.test_table import CASES, call

DIFFERENTIABLE = [c for c in CASES if OPS[c.values[0]].differentiable]
BATCH = 3


def _outputs(out: Any) -> list[Any]:
    """The floating outputs of an op, as a list."""
    return [o for o in (out if isinstance(out, tuple) else (out,)) if o.dtype.kind in "fc"]


def _setup(name: str, case: S, seed: int) -> tuple[Any, tuple[Any, ...], list[int], np.random.Generator]:
    """The op as a function of flat inputs, those inputs without history, and which of them are float."""
    fn, inputs = call(name, case)
    plain = tuple(fg.tensor(a.data) if isinstance(a, fg.Tensor) else a for a in inputs)
    floats = [i for i, a in enumerate(inputs) if isinstance(a, fg.Tensor) and a.requires_grad]
    return fn, plain, floats, np.random.default_rng(seed)


def _direction(rng: np.random.Generator, like: Any, batch: tuple[int, ...] = ()) -> np.ndarray:
    """A random tangent for ``like`` (complex for a complex input), with leading ``batch`` dims."""
    shape = batch + tuple(like.shape)
    if like.dtype.kind == "c":
        return rng.normal(size=shape) + 1j * rng.normal(size=shape)
    return rng.normal(size=shape)


def _inner(a: Any, b: Any) -> float:
    """The real inner product Re <a, b> = Re sum conj(a) b, under which the VJP is the adjoint of the JVP."""
    return float(np.real(np.sum(np.conj(a) * b)))


def _jvp(fn: Any, inputs: tuple[Any, ...], tangents: dict[int, np.ndarray], batch: tuple[int, ...] = ()
         ) -> list[np.ndarray]:
    """The output tangents of ``fn`` (zeros where an output got none) with ``tangents[i]`` on input i."""
    with fwAD.dual_level():
        duals = [fwAD.make_dual(a, tangents[i]) if i in tangents else a for i, a in enumerate(inputs)]
        tangents_out = [fwAD.unpack_dual(o).tangent for o in _outputs(fn(*duals))]
        primals = _outputs(fn(*inputs))
    return [np.zeros(batch + p.shape) if t is None else t.data for t, p in zip(tangents_out, primals)]


@pytest.mark.parametrize("name,case", DIFFERENTIABLE)
def test_jvp_matches_finite_differences(name: str, case: S) -> None:
    fn, inputs, floats, rng = _setup(name, case, 0)
    v = {i: _direction(rng, inputs[i]) for i in floats}
    eps = 1e-6

    def shifted(sign: float) -> list[np.ndarray]:
        moved = [fg.tensor(a.data + sign * eps * v[i]) if i in v else a for i, a in enumerate(inputs)]
        return [o.data for o in _outputs(fn(*moved))]

    numeric = [(hi - lo) / (2 * eps) for hi, lo in zip(shifted(1.0), shifted(-1.0))]
    for analytic, expected in zip(_jvp(fn, inputs, v), numeric):
        np.testing.assert_allclose(analytic, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,case", DIFFERENTIABLE)
def test_jvp_is_the_transpose_of_the_vjp(name: str, case: S) -> None:
    """<u, J v> from forward mode equals <J^T u, v> from reverse mode."""
    fn, inputs, floats, rng = _setup(name, case, 1)
    v = {i: _direction(rng, inputs[i]) for i in floats}
    leaves = tuple(fg.tensor(a.data, requires_grad=True) if i in v else a for i, a in enumerate(inputs))
    outs = _outputs(fn(*leaves))
    u = [_direction(rng, o) for o in outs]
    grads = fg.autograd.grad(outs, [leaves[i] for i in floats], u, allow_unused=True, materialize_grads=True)
    forward = sum(_inner(ui, jv) for ui, jv in zip(u, _jvp(fn, inputs, v)))
    backward = sum(_inner(g.data, v[i]) for g, i in zip(grads, floats))
    assert forward == pytest.approx(backward, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("name,case", DIFFERENTIABLE)
def test_batched_tangents_equal_a_loop(name: str, case: S) -> None:
    """A batch of tangents on the first float input (the others get none) gives, per direction, the
    tangent that direction gives alone."""
    fn, inputs, floats, rng = _setup(name, case, 2)
    first = floats[0]
    batch = _direction(rng, inputs[first], (BATCH,))
    together = _jvp(fn, inputs, {first: batch}, (BATCH,))
    for b in range(BATCH):
        for stacked, single in zip(together, _jvp(fn, inputs, {first: batch[b]})):
            np.testing.assert_allclose(stacked[b], single, rtol=1e-12, atol=1e-12)


REAL = [c for c in DIFFERENTIABLE if all(not (isinstance(a, np.ndarray) and a.dtype.kind == "c")
                                         for a in (*c.values[1].args, *c.values[1].kwargs.values()))]


@pytest.mark.parametrize("name,case", REAL)
def test_the_vjp_is_differentiable_in_its_gradient_at_zero(name: str, case: S) -> None:
    """The derivative of the VJP in its incoming gradient, at a gradient of zeros, is the JVP (torch's double-backward
    trick, and any second derivative where a gradient vanishes): a rule that loses it there (a log of g, a branch on
    g != 0) gives silently wrong Hessians."""
    fn, inputs, floats, rng = _setup(name, case, 2)
    v = {i: _direction(rng, inputs[i]) for i in floats}
    leaves = tuple(fg.tensor(a.data, requires_grad=True) if i in v else a for i, a in enumerate(inputs))
    outs = [o for o in _outputs(fn(*leaves)) if o.requires_grad]
    zeros = [fg.zeros(o.shape, dtype=o.dtype, requires_grad=True) for o in outs]
    vjps = fg.autograd.grad(outs, [leaves[i] for i in floats], zeros, create_graph=True, allow_unused=True,
                            materialize_grads=True)
    used = [(g, v[i]) for g, i in zip(vjps, floats) if g.requires_grad]
    twice = fg.autograd.grad([g for g, _ in used], zeros, [t for _, t in used], allow_unused=True,
                             materialize_grads=True) if used else [np.zeros(o.shape) for o in outs]
    forward = [t for t, o in zip(_jvp(fn, inputs, v), _outputs(fn(*inputs))) if o is not None]
    for got, expected in zip(twice, [f for f, o in zip(forward, _outputs(fn(*leaves))) if o.requires_grad]):
        np.testing.assert_allclose(np.asarray(getattr(got, "data", got)), expected, rtol=1e-7, atol=1e-9)
