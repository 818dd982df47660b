"""Property: random sequences of views and in-place operations give the same values and gradients as the
same computation written without in-place operations."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.func as ff
from tests.budget import examples

SHAPE = (4, 6)

# view recipes: each maps a tensor (or an index array) to a view of it, with funcgrad's view ops
VIEWS: dict[str, Callable[[Any], Any]] = {
    "rows": lambda t: t[1:3],
    "column": lambda t: t[:, 2],
    "transpose": lambda t: fg.transpose(t, 0, 1),
    "strided": lambda t: t[::2, 1::2],
    "block_t": lambda t: fg.transpose(t[1:, :3], 0, 1),
    "flat": lambda t: fg.reshape(t, (24,))[5:17],
    "whole": lambda t: t,
}
# in-place ops with their out-of-place twins: (name, in-place on a view, out-of-place on values)
OPS = {
    "mul_y": (lambda v, y: v.mul_(y[: v.shape[-1]]), lambda v, y: v * y[: v.shape[-1]]),
    "add_y": (lambda v, y: v.add_(y[: v.shape[-1]]), lambda v, y: v + y[: v.shape[-1]]),
    "sin": (lambda v, y: v.sin_(), lambda v, y: fg.sin(v)),
    "scale": (lambda v, y: v.mul_(1.5), lambda v, y: v * 1.5),
    "fill": (lambda v, y: v.fill_(0.25), lambda v, y: v * 0.0 + 0.25),
}


def region(view: str) -> np.ndarray:
    """The flat positions in the base that the view covers, shaped like the view."""
    return np.asarray(VIEWS[view](fg.tensor(np.arange(np.prod(SHAPE)).reshape(SHAPE))).data)


def apply_steps(x: Any, y: Any, steps: list[tuple[str, str]], in_place: bool) -> Any:
    """``x`` after ``steps``: each an op of OPS on a view of ``x`` written in place, or its out-of-place twin (the
    view's region replaced by ``index_put``)."""
    for view, op in steps:
        if in_place:
            OPS[op][0](VIEWS[view](x), y)
        else:
            flat = fg.reshape(x, (-1,))
            idx = region(view)
            x = fg.reshape(fg.index_put(flat, (fg.tensor(idx),), OPS[op][1](flat[idx], y)), SHAPE)
    return x


def run(steps: list[tuple[str, str]], in_place: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    a = fg.tensor(rng.uniform(-1, 1, SHAPE), requires_grad=True)
    y = fg.tensor(rng.uniform(0.5, 1.5, 24), requires_grad=True)
    weights = fg.tensor(rng.uniform(-1, 1, SHAPE))
    x = apply_steps(a * 1.0, y, steps, in_place)
    (x * weights).sum().backward()
    return x.data.copy(), a.grad.data, (y.grad.data if y.grad is not None else np.zeros(24))


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(VIEWS)), st.sampled_from(sorted(OPS))), min_size=1, max_size=4))
def test_views_and_inplace_match_out_of_place(steps: list[tuple[str, str]]) -> None:
    for got, want in zip(run(steps, in_place=True), run(steps, in_place=False)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_issue_example_slice_times_y() -> None:
    """x = a.clone(); x[1:3] *= y: gradients flow to a (outside and inside the slice) and to y."""
    a = fg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = fg.tensor([10.0, 20.0], requires_grad=True)
    x = a.clone()
    x[1:3] *= y
    np.testing.assert_allclose(x.data, [1.0, 20.0, 60.0, 4.0])
    x.sum().backward()
    np.testing.assert_allclose(a.grad.data, [1.0, 10.0, 20.0, 1.0])
    np.testing.assert_allclose(y.grad.data, [2.0, 3.0])


def _scalar_program(steps: list[tuple[str, str]], in_place: bool) -> Callable[[Any], Any]:
    """``a -> sum(w * x * x)`` for ``x`` built from ``a`` by ``steps`` (with ``y`` depending on ``a`` too)."""
    rng = np.random.default_rng(1)
    scale, weights = rng.uniform(0.5, 1.5, 24), rng.uniform(-1, 1, SHAPE)

    def f(a: Any) -> Any:
        y = fg.reshape(a, (-1,)) * scale + 1.0
        x = apply_steps(a * 1.0, y, steps, in_place)
        return (x * weights * x).sum()

    return f


@settings(max_examples=examples(10), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(VIEWS)), st.sampled_from(sorted(OPS))), min_size=1, max_size=3))
def test_second_derivatives_through_views_written_in_place_agree_in_every_mode(steps: list[tuple[str, str]]) -> None:
    """Forward-over-reverse (hessian, hvp), reverse-over-reverse and forward-over-forward give the Hessian of the
    out-of-place program: the first lost the region's tangent (copy_slices's rule replayed the view past the
    forward-AD layer), the last the tangent of the tangent (a LINEAR op's tangent was computed unseen)."""
    rng = np.random.default_rng(2)
    a, u, v = (rng.uniform(-1, 1, SHAPE) for _ in range(3))
    f, reference = _scalar_program(steps, True), _scalar_program(steps, False)
    want = ff.grad(lambda x: (ff.grad(reference)(x) * v).sum())(a)  # H v, reverse over reverse, out of place
    fwd_rev = ff.jvp(ff.grad(f), (a,), (v,))[1]
    rev_rev = ff.grad(lambda x: (ff.grad(f)(x) * v).sum())(a)
    fwd_fwd = ff.jvp(lambda x: ff.jvp(f, (x,), (v,))[1], (a,), (u,))[1]
    np.testing.assert_allclose(fwd_rev, want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(rev_rev, want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fwd_fwd, (want * u).sum(), rtol=1e-10, atol=1e-10)


def test_nested_forward_mode_through_real_and_conj_physical() -> None:
    """jvp of jvp through the LINEAR ops (their tangent was computed past the outer level: 0 instead of 2)."""
    x0, u = np.array([0.3, -0.7]), np.array([1.0, 0.5])
    for op in (fg.real, fg.conj_physical):
        second = ff.jvp(lambda x, op=op: ff.jvp(lambda z: op(z * z), (x,), (u,))[1], (x0,), (u,))[1]
        np.testing.assert_allclose(second, 2 * u * u)
