"""Views written in place, against PyTorch: random programs of views (of views), in-place ops, ``retain_grad``
and tensor hooks give torch's values, leaf gradients, retained gradients, hook gradients and errors."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.autograd import Function
from tests.budget import examples

torch = pytest.importorskip("torch")

SHAPE = (4, 5)
X0 = np.random.default_rng(7).uniform(-1.0, 1.0, SHAPE)
Y0 = np.random.default_rng(8).uniform(0.5, 1.5, 5)

# view recipes, written once for both modules (funcgrad's names are torch's)
VIEWS: dict[str, Callable[[Any], Any]] = {
    "row": lambda t: t[1],
    "rows": lambda t: t[1:3],
    "column": lambda t: t[:, 2],
    "strided": lambda t: t[::2, 1::2],
    "transpose": lambda t: t.transpose(0, 1),
    "diagonal": lambda t: t.diagonal(),
    "flat": lambda t: t.reshape(-1)[3:8],
    "whole": lambda t: t[...],
}
# in-place ops: (target, y) -> None, y a vector of 5 that requires grad
OPS: dict[str, Callable[[Any, Any], Any]] = {
    "mul_y": lambda v, y: v.mul_(y[: v.shape[-1]]),
    "add_y": lambda v, y: v.add_(y[: v.shape[-1]] * 2),
    "sin_": lambda v, y: v.sin_(),
    "clamp_": lambda v, y: v.clamp_(-0.5, 0.5),
    "neg_": lambda v, y: v.neg_(),
    "scale": lambda v, y: v.mul_(1.5),
    "square": lambda v, y: v.mul_(v),
    "setitem": lambda v, y: v.__setitem__(..., y[: v.shape[-1]] ** 2),
    "copy_": lambda v, y: v.copy_(y[: v.shape[-1]].cos()),
}
# what a step marks on the tensor it touches before (or after) the op
MARKS = ("none", "retain_before", "retain_after", "hook_before", "hook_after")


def _numpy(value: Any) -> Any:
    return None if value is None else np.array(value.detach().numpy() if hasattr(value, "detach") else value)


def run(m: Any, steps: list[tuple[str, str, str, bool]], loss_on: int) -> Any:
    """Run the program with module ``m``; return its values and gradients, or the error's type."""
    x = m.tensor(X0.copy(), requires_grad=True)
    y = m.tensor(Y0.copy(), requires_grad=True)
    base = x * 1.0
    touched = [base]
    retained, hooked = [], []
    try:
        for view, op, mark, nested in steps:
            target = VIEWS[view](base)
            if nested and target.ndim == 2:
                target = target[1:]
            for when in ("before", "after"):
                if mark == f"retain_{when}":
                    target.retain_grad()
                    retained.append(target)
                if mark == f"hook_{when}":
                    hooked.append([])
                    target.register_hook(hooked[-1].append)
                if when == "before":
                    OPS[op](target, y)
            touched.append(target)
        out = touched[loss_on % len(touched)]
        weights = m.tensor(np.linspace(-1.0, 1.0, out.numel()).reshape(tuple(out.shape)))
        ((out * weights).sum() + (base * base).sum()).backward()
    except RuntimeError:
        return "RuntimeError"
    return ([_numpy(base), _numpy(x.grad), _numpy(y.grad)] + [_numpy(t.grad) for t in retained]
            + [_numpy(h[0]) if h else None for h in hooked])


def assert_same(got: Any, want: Any) -> None:
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
        return
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert (a is None) == (b is None), f"item {i}: funcgrad {a}, torch {b}"
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"item {i}")


STEPS = st.lists(st.tuples(st.sampled_from(sorted(VIEWS)), st.sampled_from(sorted(OPS)), st.sampled_from(MARKS),
                           st.booleans()), min_size=1, max_size=4)


@settings(max_examples=examples(60), deadline=None)
@given(STEPS, st.integers(0, 4))
def test_views_inplace_retain_grad_and_hooks_match_torch(steps: list[tuple[str, str, str, bool]],
                                                         loss_on: int) -> None:
    torch.set_default_dtype(torch.float64)
    assert_same(run(fg, steps, loss_on), run(torch, steps, loss_on))


def test_retain_grad_follows_an_inplace_op_as_torch() -> None:
    """``y.retain_grad(); y.mul_(3)``: ``y.grad`` is the gradient of y's new value (it was the old one's)."""
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.data, 2 * y.data)  # d(y*y)/dy of y's current value: [12, 24]
    np.testing.assert_allclose(x.grad.data, 72 * x.data)


def test_retain_grad_on_a_view_follows_inplace_on_it_and_on_its_base() -> None:
    x = fg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x * 2
    v = y[1]
    v.retain_grad()
    v.mul_(3)
    (v * v).sum().backward()
    np.testing.assert_allclose(v.grad.data, [36.0, 48.0, 60.0])  # was None
    y = x * 2
    v = y[1]
    v.retain_grad()
    y.mul_(3)  # the base written in place: the view's new history retains too
    (v * v).sum().backward()
    np.testing.assert_allclose(v.grad.data, [36.0, 48.0, 60.0])


def test_retain_grad_follows_a_custom_function_that_marks_dirty() -> None:
    class Double(Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            ctx.mark_dirty(a)
            return a.mul_(2)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    x = fg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.retain_grad()
    Double.apply(y)
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.data, 2 * y.data)
    np.testing.assert_allclose(x.grad.data, 8 * x.data)


# ----- real, imag, view_as_real and view_as_complex are views, as torch's: writes reach the tensor ---------
def _complex(m: Any, values: Any) -> Any:
    return m.tensor(np.array(values, dtype=np.complex128), requires_grad=True)


def _written_parts(m: Any) -> list[Any]:
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = m.tensor(np.zeros(3, dtype=np.complex128))
    z.real.copy_(x)
    z.imag.copy_(x * 2)
    (z.abs() ** 2).sum().backward()
    return [z, x.grad]


def _written_pairs(m: Any) -> list[Any]:
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = m.tensor(np.zeros(3, dtype=np.complex128))
    m.view_as_real(z)[:, 1].copy_(x)
    (z * z).real.sum().backward()
    return [z, x.grad]


def _scaled_real_part(m: Any) -> list[Any]:
    z = _complex(m, [1 + 2j, 3 - 1j])
    w = z * (1 + 1j)
    w.real.mul_(3)
    (w.abs() ** 2).sum().backward()
    return [w, z.grad]


def _imag_setitem(m: Any) -> list[Any]:
    z = _complex(m, [1 + 2j, 3 - 1j])
    w = z * 1
    w.imag[0] = w.real[1] ** 2
    (w * w).real.sum().backward()
    return [w, z.grad]


def _saved_real_part_then_written(m: Any) -> list[Any]:
    z = _complex(m, [1 + 2j, 3 - 1j])
    w = z * 1
    r = w.real
    s = r * r  # saves r, a view of w
    w.mul_(2)
    s.sum().backward()  # raises: r changed
    return [s]


def _pairs_written_as_complex(m: Any) -> list[Any]:
    x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    m.view_as_complex(y).mul_(1j)
    (y ** 3).sum().backward()
    return [y, x.grad]


@pytest.mark.parametrize("program", [_written_parts, _written_pairs, _scaled_real_part, _imag_setitem,
                                     _saved_real_part_then_written, _pairs_written_as_complex])
def test_complex_part_views_written_in_place_match_torch(program: Callable[[Any], list[Any]]) -> None:
    """Writing ``z.real``, ``z.imag`` or ``view_as_real(z)`` changes ``z`` (it was a copy: the write was lost)."""
    results = []
    for m in (torch, fg):
        try:
            results.append([_numpy(v) for v in program(m)])
        except RuntimeError:
            results.append("RuntimeError")
    assert_same(results[1], results[0])


def test_numpy_real_of_a_tensor_is_a_view_as_numpys() -> None:
    z = fg.tensor(np.array([1 + 2j, 3 - 1j]))
    np.real(z)[...] = 5.0
    np.testing.assert_array_equal(z.data, [5 + 2j, 5 - 1j])
