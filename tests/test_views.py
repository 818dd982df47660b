"""PyTorch's rules for writing views in place (its CreationMeta): views made under ``no_grad`` or
``inference_mode``, outputs of ops returning several views (``split``, ``chunk``, ``unbind``) and views
returned by a custom Function may not be written in place while that is recorded; writing their base
makes them unusable for backward. Each case raises PyTorch's error instead of a wrong gradient."""
from __future__ import annotations

import re

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.autograd import Function

NO_GRAD = ("no_grad mode and {} modified inplace with grad mode enabled. Given that this use case is ambiguous "
           "and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace "
           "either both inside the no_grad block")
MULTI = ("is a view and {} modified inplace. This view is the output of a function that returns multiple views. "
         "Such functions do not allow the output views to be modified inplace. You should replace the inplace "
         "operation by an out-of-place one.")
CUSTOM = ("is a view and {} modified inplace. This view was created inside a custom Function (or because an input "
          "was returned as-is) and the autograd logic to handle view+inplace would override the custom backward")
DIRECT, INDIRECT = "is being", "its base or another view of its base has been"


def leaf(n: int = 4) -> fg.Tensor:
    return fg.tensor(np.arange(1.0, n + 1), requires_grad=True)


class Triple(Function):
    """Returns its input as is; the gradient is 3 g (a view whose in-place change would drop that 3)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 3


class FirstTwo(Function):
    """Returns a view of its input made inside forward."""

    @staticmethod
    def forward(ctx, x):
        return x[:2]

    @staticmethod
    def backward(ctx, g):
        return fg.cat([g * 3, fg.zeros(2)])


def no_grad_view(y: fg.Tensor) -> fg.Tensor:
    with fg.no_grad():
        return y[:2]


def inference_view(y: fg.Tensor) -> fg.Tensor:
    with fg.inference_mode():
        return y[:2]


MAKERS = {
    "no_grad": (no_grad_view, "A view was created in " + NO_GRAD),
    "inference_mode": (inference_view, "A view was created in inference mode and {} modified inplace in normal "
                                       "mode. Given that this use case is ambiguous and error-prone, it is forbidden."),
    "split": (lambda y: fg.split(y, 2)[0], "Output 0 of Split " + MULTI),
    "chunk": (lambda y: fg.chunk(y, 2)[1], "Output 1 of Split " + MULTI),
    "unbind": (lambda y: fg.unbind(y)[2], "Output 2 of Unbind " + MULTI),
    "custom Function, input as is": (Triple.apply, "Output 0 of Triple " + CUSTOM),
    "custom Function, view": (FirstTwo.apply, "Output 0 of FirstTwo " + CUSTOM),
}


@pytest.mark.parametrize("kind", MAKERS)
def test_writing_a_forbidden_view_in_place_raises_pytorchs_error(kind: str) -> None:
    make, message = MAKERS[kind]
    x = leaf()
    y = x * 1
    view = make(y)
    before = y.data.copy()
    with pytest.raises(RuntimeError, match=re.escape(message.format(DIRECT))):
        view.mul_(2)
    np.testing.assert_array_equal(y.data, before)  # nothing was written
    (y * 1).sum().backward()  # the graph is intact
    np.testing.assert_array_equal(x.grad.data, np.ones(4))


@pytest.mark.parametrize("kind", MAKERS)
def test_a_view_of_a_forbidden_view_inherits_the_rule(kind: str) -> None:
    make, _ = MAKERS[kind]
    view = make(leaf() * 1)
    with pytest.raises(RuntimeError, match="modified inplace"):
        view[...].add_(1.0)


@pytest.mark.parametrize("kind", MAKERS)
def test_writing_the_base_makes_a_forbidden_view_raise_in_backward(kind: str) -> None:
    make, message = MAKERS[kind]
    y = leaf() * 1
    view = make(y)
    y.mul_(2)  # allowed: the view is not used for gradients afterwards...
    assert np.shares_memory(view.data, y.data)
    loss = (view * 3).sum()  # ...and using it raises when backward reaches it
    with pytest.raises(RuntimeError, match=re.escape(message.format(INDIRECT))):
        loss.backward()


def test_the_issue_examples_no_longer_give_wrong_gradients() -> None:
    x = leaf(3)
    y = x * 1
    with fg.no_grad():
        v = y[:2]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        v.mul_(2)  # before: accepted, and d(y.sum())/dx stayed 1 where y[:2] had been doubled
    z = leaf(2)
    w = Triple.apply(z * 1)
    with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
        w.mul_(2)  # before: accepted, and the Function's backward (g * 3) was dropped: 2 instead of 6
    (Triple.apply(z * 1) * 2).sum().backward()
    np.testing.assert_array_equal(z.grad.data, [6.0, 6.0])


def test_forbidden_views_may_be_written_where_nothing_is_recorded() -> None:
    y = leaf() * 1
    first, _ = fg.split(y, 2)
    with fg.no_grad():
        first.mul_(2)  # not recorded: allowed, as torch
    np.testing.assert_array_equal(y.data, [2.0, 4.0, 3.0, 4.0])
    plain = fg.tensor([1.0, 2.0, 3.0, 4.0])
    with fg.no_grad():
        view = plain[:2]
    view.mul_(2)  # nothing requires grad: allowed, as torch
    a, b = fg.split(plain, 2)
    b.add_(1.0)
    np.testing.assert_array_equal(plain.data, [2.0, 4.0, 4.0, 5.0])
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace with "
                                           "grad mode enabled. This view is the output of a function that returns "
                                           "multiple views"):
        a.copy_(fg.ones(2, requires_grad=True))  # recorded: an argument requires grad (and a has no history)


def test_views_made_in_grad_mode_keep_working() -> None:
    x = leaf()
    y = x * 1
    y[:2].mul_(3)
    y.narrow(0, 2, 2).add_(y[:2])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [6.0, 6.0, 1.0, 1.0])


def test_a_view_op_reads_a_number_given_as_a_tensor_at_the_call() -> None:
    """``v = diagonal(b, offset=t)``, ``t.add_(1)``, then ``v.mul_(10)``: torch scales the offset-1 diagonal of
    b; funcgrad's view function replayed the offset 2 (b[0, 2] scaled, v's values unchanged, a wrong gradient)."""
    x = fg.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
    b = x * 1.0
    t = fg.tensor(1)
    v = fg.diagonal(b, offset=t)
    t.add_(1)
    v.mul_(10.0)
    np.testing.assert_array_equal(v.data, [10.0, 50.0])
    np.testing.assert_array_equal(b.data, [[0.0, 10.0, 2.0], [3.0, 4.0, 50.0], [6.0, 7.0, 8.0]])
    b.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [[1.0, 10.0, 1.0], [1.0, 1.0, 10.0], [1.0, 1.0, 1.0]])


def test_detach_in_place_of_a_view_raises_as_torch() -> None:
    """A view detached in place would get its history back from its base's next in-place op (refresh_views)."""
    x = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    view = (x * 2)[1:]
    with pytest.raises(RuntimeError, match=r"Can't detach views in-place. Use detach\(\) instead"):
        view.detach_()


@pytest.mark.parametrize("write", [lambda v: v.mul_(2.0), lambda v: v.clamp_(0.0, 0.5), lambda v: v.zero_(),
                                   lambda v: v.__setitem__((slice(None), 0), 2.0), lambda v: v.sin_()])
@pytest.mark.parametrize("recorded", [True, False])
def test_writing_an_expanded_view_raises_pytorchs_error_and_changes_nothing(write, recorded: bool) -> None:
    """An expanded view repeats its base's elements: torch refuses to write them (a column of this one too; a row
    may be written, see test_torch_parity). With a history the write goes through the base (copy_slices), where
    NumPy's own 'assignment destination is read-only' came out instead."""
    x = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = x * 1.0 if recorded else fg.tensor([1.0, 2.0, 3.0])
    view = base.unsqueeze(0).expand(2, 3)
    history, version = base.grad_fn, base._version
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        write(view)
    assert base.grad_fn is history and base._version == version
    np.testing.assert_array_equal(base.data, [1.0, 2.0, 3.0])
    if recorded:
        base.sum().backward()
        np.testing.assert_array_equal(x.grad.data, [1.0, 1.0, 1.0])
