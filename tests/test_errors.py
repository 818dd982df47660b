"""Misuse raises PyTorch's exception type with a message that says what went wrong and what to do,
and leaves the library working: a following correct backward gives the right gradient."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import autograd


def leaf(*values: float) -> fg.Tensor:
    return fg.tensor(list(values), requires_grad=True)


def assert_still_works() -> None:
    assert fg.is_grad_enabled()
    x = leaf(1.0, 2.0)
    (x * x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 12.0])
    (g,) = autograd.grad(fg.sin(x).sum(), x)
    np.testing.assert_allclose(g.data, np.cos([1.0, 2.0]))


def implicit_grad_of_non_scalar() -> None:
    (leaf(1.0, 2.0) * 2).backward()


def backward_without_grad() -> None:
    fg.tensor([1.0, 2.0]).sum().backward()


def backward_of_output_computed_under_no_grad() -> None:
    x = leaf(1.0)
    with fg.no_grad():
        y = (x * 2).sum()
    y.backward()


def grad_wrt_tensor_without_grad() -> None:
    x = leaf(1.0, 2.0)
    autograd.grad((x * 2).sum(), fg.tensor([1.0, 2.0]))


def grad_outputs_of_wrong_shape() -> None:
    x = leaf(1.0, 2.0)
    autograd.grad(x * 2, x, grad_outputs=fg.ones(3))


def backward_gradient_of_wrong_shape() -> None:
    (leaf(1.0, 2.0) * 2).backward(fg.ones(2, 1))


def wrong_number_of_grad_outputs() -> None:
    x = leaf(1.0, 2.0)
    autograd.grad([x * 2, x * 3], x, grad_outputs=[fg.ones(2)])


def backward_twice() -> None:
    y = (leaf(1.0, 2.0) ** 2).sum()
    y.backward()
    y.backward()


def grad_twice() -> None:
    x = leaf(1.0, 2.0)
    y = fg.exp(x).sum()
    autograd.grad(y, x)
    autograd.grad(y, x)


def inplace_on_leaf() -> None:
    leaf(1.0).add_(1)


def augmented_assignment_on_leaf() -> None:
    x = leaf(1.0)
    x *= 2


def inplace_on_saved_input() -> None:
    x = leaf(1.0, 2.0)
    h = x * 1
    y = (h * h).sum()  # mul saves h
    h.add_(1)
    y.backward()


def inplace_on_saved_output() -> None:
    x = leaf(1.0, 2.0)
    e = fg.exp(x)      # exp saves its output
    e.mul_(2)
    e.sum().backward()


def leaf_changed_under_no_grad_after_being_saved() -> None:
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    with fg.no_grad():
        x.add_(1)
    y.backward()


def int_tensor_requires_grad() -> None:
    fg.tensor([1, 2], requires_grad=True)


def empty_backward_inputs() -> None:
    x = leaf(1.0)
    (x * 2).sum().backward(inputs=[])


def unused_input() -> None:
    x, y = leaf(1.0), leaf(2.0)
    autograd.grad((x * 2).sum(), [x, y])


def hook_on_tensor_without_grad() -> None:
    fg.tensor([1.0]).register_hook(lambda g: g)


def retain_grad_without_grad() -> None:
    fg.tensor([1.0]).retain_grad()


def numpy_of_tensor_requiring_grad() -> None:
    leaf(1.0).numpy()


def requires_grad_on_non_leaf() -> None:
    (leaf(1.0) * 2).requires_grad = False


def item_of_many_elements() -> None:
    fg.tensor([1.0, 2.0]).item()


MISUSES = [
    (implicit_grad_of_non_scalar, RuntimeError,
     r"grad can be implicitly created only for scalar outputs.*pass the gradient"),
    (backward_without_grad, RuntimeError, r"element 0 of tensors does not require grad and does not have a grad_fn"),
    (backward_of_output_computed_under_no_grad, RuntimeError, r"does not require grad.*no_grad"),
    (grad_wrt_tensor_without_grad, RuntimeError,
     r"One of the differentiated Tensors .*does not require grad.*requires_grad_"),
    (grad_outputs_of_wrong_shape, RuntimeError,
     r"Mismatch in shape: grad_output\[0\] has a shape of \(3,\) and output\[0\] has a shape of \(2,\)"),
    (backward_gradient_of_wrong_shape, RuntimeError, r"Mismatch in shape"),
    (wrong_number_of_grad_outputs, RuntimeError, r"1 entries but there are 2 outputs"),
    (backward_twice, RuntimeError, r"Trying to backward through the graph a second time.*retain_graph=True"),
    (grad_twice, RuntimeError, r"Trying to backward through the graph a second time"),
    (inplace_on_leaf, RuntimeError,
     r"a leaf Variable that requires grad is being used in an in-place operation.*no_grad"),
    (augmented_assignment_on_leaf, RuntimeError, r"a leaf Variable that requires grad"),
    (inplace_on_saved_input, RuntimeError,
     r"one of the variables needed for gradient computation has been modified by an inplace operation: "
     r"\[MulBackward0, tensor of shape \[2\]\] is at version 1; expected version 0 instead"),
    (inplace_on_saved_output, RuntimeError,
     r"modified by an inplace operation: \[ExpBackward0, tensor of shape \[2\]\] is at version 1; "
     r"expected version 0"),
    (leaf_changed_under_no_grad_after_being_saved, RuntimeError,
     r"modified by an inplace operation: \[MulBackward0, tensor of shape \[2\]\] is at version 1; "
     r"expected version 0.*clone\(\)"),
    (int_tensor_requires_grad, RuntimeError, r"only Tensors of floating point and complex dtype can require "
                                             r"gradients, got int64"),
    (empty_backward_inputs, RuntimeError, r"'inputs' argument to backward\(\) cannot be empty"),
    (unused_input, RuntimeError, r"appears to not have been used in the graph.*allow_unused=True"),
    (hook_on_tensor_without_grad, RuntimeError, r"doesn't require gradient"),
    (retain_grad_without_grad, RuntimeError, r"can't retain_grad on Tensor that has requires_grad=False"),
    (numpy_of_tensor_requiring_grad, RuntimeError, r"detach\(\)\.numpy\(\)"),
    (requires_grad_on_non_leaf, RuntimeError, r"only change requires_grad flags of leaf variables.*detach"),
    (item_of_many_elements, RuntimeError, r"a Tensor with 2 elements cannot be converted to Scalar"),
]


@pytest.mark.parametrize(("misuse", "error", "message"), MISUSES, ids=[m[0].__name__ for m in MISUSES])
def test_misuse_raises_a_clear_error_and_the_library_still_works(misuse, error, message) -> None:
    with pytest.raises(error, match=message):
        misuse()
    assert_still_works()


def test_inplace_on_leaf_under_no_grad_works_and_bumps_the_version() -> None:
    x = leaf(1.0, 2.0)
    with fg.no_grad():
        x.add_(1)
        x *= 2
    assert x._version == 2 and x.is_leaf and x.requires_grad and x.grad_fn is None
    np.testing.assert_array_equal(x.data, [4.0, 6.0])
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [8.0, 12.0])


def test_a_failed_inplace_leaves_the_leaf_untouched() -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError):
        x.add_(1)
    assert x._version == 0 and x.tolist() == [1.0, 2.0]


def test_inplace_on_a_tensor_saved_by_nothing_is_fine() -> None:
    x = leaf(1.0, 2.0)
    h = x * 1
    e = fg.exp(h)   # exp saves its output, not h
    h.mul_(2)
    e.sum().backward()
    np.testing.assert_allclose(x.grad.data, np.exp([1.0, 2.0]))


def test_an_error_raised_by_a_hook_propagates_and_restores_grad_mode() -> None:
    x = leaf(1.0)
    y = x * 2

    def fail(g: fg.Tensor) -> None:
        raise ValueError("hook failed")

    handle = y.register_hook(fail)
    out = (y * 3).sum()
    with pytest.raises(ValueError, match="hook failed"):
        out.backward(retain_graph=True)
    handle.remove()
    assert_still_works()
    out.backward()  # the graph was retained, so it is still usable once the hook is gone
    assert x.grad.tolist() == [6.0]
