"""Hooks and graph objects: tensor hooks, post-accumulate-grad hooks, Node pre/post hooks, handles,
metadata, names and ``next_functions``."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import autograd


def leaf(*values: float) -> fg.Tensor:
    return fg.tensor(list(values), requires_grad=True)


# ----- tensor hooks ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_tensor_hook_observes_the_summed_gradient_once(kind: str) -> None:
    x = leaf(1.0, 2.0)
    t = x if kind == "leaf" else x * 1
    seen: list[list[float]] = []
    t.register_hook(lambda g: seen.append(g.tolist()))
    (t * t + 3 * t).sum().backward()  # two uses: the hook sees their sum, once
    assert seen == [[5.0, 7.0]]
    np.testing.assert_array_equal(x.grad.data, [5.0, 7.0])


@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_tensor_hook_replaces_the_gradient_and_is_removable(kind: str) -> None:
    x = leaf(1.0, 2.0)
    t = x if kind == "leaf" else x * 1
    handle = t.register_hook(lambda g: g * 10)
    y = (t * 3).sum()
    y.backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.data, [30.0, 30.0])
    handle.remove()
    handle.remove()  # harmless twice
    x.grad = None
    y.backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 3.0])


def test_tensor_hooks_chain_in_registration_order() -> None:
    x = leaf(1.0)
    m = x * 1
    m.register_hook(lambda g: g + 1)
    m.register_hook(lambda g: g * 10)
    m.retain_grad()
    (m * 2).sum().backward()
    assert m.grad.tolist() == [30.0]  # retain_grad sees the gradient after the hooks, as torch
    assert x.grad.tolist() == [30.0]


@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_tensor_hooks_apply_to_autograd_grad(kind: str) -> None:
    x = leaf(1.0, 2.0)
    t = x if kind == "leaf" else x * 1
    t.register_hook(lambda g: g * 10)
    (g,) = autograd.grad((t * 3).sum(), t)
    np.testing.assert_array_equal(g.data, [30.0, 30.0])


def test_hook_with_create_graph_gets_a_differentiable_gradient() -> None:
    x = fg.tensor(2.0, requires_grad=True)
    m = x * 1
    got: list[fg.Tensor] = []
    m.register_hook(lambda g: got.append(g))
    (g,) = autograd.grad(m ** 3, x, create_graph=True)
    assert got[0].requires_grad and got[0].item() == 12.0
    assert autograd.grad(g, x)[0].item() == 12.0


def test_hook_handle_is_a_context_manager() -> None:
    x = leaf(1.0)
    with x.register_hook(lambda g: g * 0):
        (x * 2).sum().backward()
    assert x.grad.tolist() == [0.0]
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0]


# ----- post-accumulate-grad hooks ----------------------------------------------------------------
def test_post_accumulate_grad_hook_sees_the_updated_grad() -> None:
    x = leaf(1.0, 2.0)
    seen: list[list[float]] = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * x).sum().backward()
    (x * 3).sum().backward()
    assert seen == [[2.0, 4.0], [5.0, 7.0]]
    autograd.grad((x * 2).sum(), x)  # grad() accumulates nothing, so the hook does not run
    handle.remove()
    (x * 3).sum().backward()
    assert len(seen) == 2 and x.grad.tolist() == [8.0, 10.0]


def test_post_accumulate_grad_hook_is_for_leaves_only() -> None:
    with pytest.raises(RuntimeError, match="non-leaf"):
        (leaf(1.0) * 2).register_post_accumulate_grad_hook(lambda t: None)


def returns_three(g: fg.Tensor) -> fg.Tensor:
    return fg.ones(3)


@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_a_tensor_hook_changing_the_shape_raises_at_the_hook(kind: str, create_graph: bool) -> None:
    x = leaf(1.0, 2.0)
    t = x if kind == "leaf" else x * 2
    t.register_hook(returns_three)
    with pytest.raises(RuntimeError, match=r"hook 'returns_three' has changed the size of value "
                                           r"\(was \[2\] got \[3\]\)"):
        (t * 2).sum().backward(create_graph=create_graph)
    assert x.grad is None
    t.register_hook(lambda g: fg.ones(1))  # broadcastable is not enough, as torch
    with pytest.raises(RuntimeError, match="hook 'returns_three' has changed the size"):
        autograd.grad((t * 2).sum(), x)


@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_a_tensor_hook_changing_the_dtype_or_returning_a_non_tensor_raises(kind: str) -> None:
    x = leaf(1.0, 2.0)
    t = x if kind == "leaf" else x * 2
    handle = t.register_hook(lambda g: g.float())
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the type of value "
                                           r"\(was float64 got float32\)"):
        (t * 2).sum().backward()
    handle.remove()
    t.register_hook(lambda g: g.data * 2)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'numpy.ndarray'"):
        (t * 2).sum().backward()


@pytest.mark.parametrize("register", ["register_prehook", "register_hook"])
def test_node_hooks_returning_wrong_shapes_or_counts_raise(register: str) -> None:
    x = leaf(1.0, 2.0)
    z = fg.exp(x)

    def wrong_shape(*grads):
        return (fg.ones(3),)

    handle = getattr(z.grad_fn, register)(wrong_shape)
    with pytest.raises(RuntimeError, match="hook 'wrong_shape' has changed the size of value"):
        (z * 2).sum().backward()
    handle.remove()

    def two(*grads):
        return (fg.ones(2), fg.ones(2))

    getattr(z.grad_fn, register)(two)
    with pytest.raises(RuntimeError, match=r"hook 'two' has returned an incorrect number of values \(got 2, but "
                                           r"expected 1\)"):
        (z * 2).sum().backward()


@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_assigning_grad_checks_type_shape_and_dtype(kind: str) -> None:
    x = leaf(1.0, 2.0)
    t = x if kind == "leaf" else x * 2
    with pytest.raises(RuntimeError, match=r"attempting to assign a gradient of size '\[3\]' to a tensor of "
                                           r"size '\[2\]'. Please ensure that the gradient and the tensor are the "
                                           "same size"):
        t.grad = fg.ones(3)
    with pytest.raises(RuntimeError, match="size '\\[1\\]'"):
        t.grad = fg.ones(1)  # broadcastable is not enough, as torch
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'float32' to a tensor with "
                                           "dtype 'float64'"):
        t.grad = fg.ones(2, dtype=np.float32)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type "
                                        "numpy.ndarray"):
        t.grad = np.ones(2)
    assert t.grad is None
    t.grad = fg.tensor([5.0, 6.0])
    (t * 1).sum().backward()
    assert x.grad.tolist() == ([6.0, 7.0] if kind == "leaf" else [2.0, 2.0])
    t.grad = None
    assert t.grad is None


# ----- node hooks --------------------------------------------------------------------------------
def test_node_post_hook_gets_grad_inputs_and_grad_outputs() -> None:
    x, y = leaf(1.0, 2.0), leaf(3.0, 4.0)
    z = x * y
    calls: list[tuple] = []
    z.grad_fn.register_hook(lambda gi, go: calls.append(([g.tolist() for g in gi], [g.tolist() for g in go])))
    (z * 2).sum().backward()
    assert calls == [([[6.0, 8.0], [2.0, 4.0]], [[2.0, 2.0]])]


def test_node_pre_hook_gets_grad_outputs() -> None:
    x = leaf(1.0, 2.0)
    z = fg.exp(x)
    calls: list[list] = []
    z.grad_fn.register_prehook(lambda go: calls.append([g.tolist() for g in go]))
    (z * 3).sum().backward()
    assert calls == [[[3.0, 3.0]]]


@pytest.mark.parametrize(("register", "hook", "expected"), [
    ("register_prehook", lambda go: (go[0] * 5,), [10.0, 10.0]),
    ("register_hook", lambda gi, go: (gi[0] * 0 + 7, None), [7.0, 7.0]),  # one per input, as torch
])
def test_node_hooks_can_replace_gradients_and_be_removed(register, hook, expected) -> None:
    x = leaf(1.0, 2.0)
    z = x * 2
    handle = getattr(z.grad_fn, register)(hook)
    y = z.sum()
    y.backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.data, expected)
    handle.remove()
    x.grad = None
    y.backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 2.0])


def test_hooks_must_be_callable() -> None:
    with pytest.raises(TypeError, match="callable"):
        (leaf(1.0) * 2).grad_fn.register_hook(42)


# ----- graph objects -----------------------------------------------------------------------------
def test_next_functions_structure_and_names() -> None:
    x, y = leaf(1.0, 2.0), leaf(3.0, 4.0)
    s = (x + y).sum()
    assert s.grad_fn.name() == "SumBackward0"
    ((add, nr),) = s.grad_fn.next_functions
    assert add.name() == "AddBackward0" and nr == 0
    (acc_x, nx), (acc_y, ny) = add.next_functions
    assert isinstance(acc_x, autograd.AccumulateGrad) and acc_x.name() == "AccumulateGrad"
    assert acc_x.variable is x and acc_y.variable is y and nx == ny == 0
    assert acc_x.next_functions == ()


def test_an_input_that_needs_no_grad_has_a_none_edge() -> None:
    x = leaf(1.0)
    z = x * 2
    assert z.grad_fn.name() == "MulBackward0"
    (acc, _), (none, nr) = z.grad_fn.next_functions
    assert acc.variable is x and none is None and nr == 0
    assert (fg.tensor([2.0]) * x).grad_fn.next_functions[0] == (None, 0)


def test_a_leaf_has_one_accumulate_grad_node_while_its_graph_lives() -> None:
    x = leaf(1.0)
    a, b = x * 2, x * 3
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]


@pytest.mark.parametrize(("f", "name"), [
    (lambda x: x * x, "MulBackward0"), (lambda x: x + x, "AddBackward0"), (lambda x: x - 1, "SubBackward0"),
    (lambda x: x / 2, "DivBackward0"), (lambda x: -x, "NegBackward0"), (fg.exp, "ExpBackward0"),
    (fg.sin, "SinBackward0"), (lambda x: x ** 2, "PowBackward0"), (lambda x: x.sum(), "SumBackward0"),
    (lambda x: x.mean(), "MeanBackward0"), (lambda x: x.clone(), "CloneBackward0"),
])
def test_node_names_follow_pytorch(f, name) -> None:
    assert f(leaf(1.0, 2.0)).grad_fn.name() == name


def test_sequence_nr_grows_and_metadata_is_a_persistent_dict() -> None:
    x = leaf(1.0)
    a = x * 2
    b = a + 1
    assert b.grad_fn.sequence_nr > a.grad_fn.sequence_nr
    node = b.grad_fn
    assert node.metadata == {}
    node.metadata["tag"] = "mine"
    assert b.grad_fn.metadata == {"tag": "mine"}


# ----- hooks in batched passes (vectorized Jacobians, jacrev) -------------------------------------
def _normalized(g: fg.Tensor) -> fg.Tensor:
    return g / fg.sqrt(fg.sum(g * g))


def _hooked_on_tensor(x: fg.Tensor) -> fg.Tensor:
    y = fg.sin(x) * 2
    y.register_hook(_normalized)
    return y * x


def _hooked_on_node(x: fg.Tensor) -> fg.Tensor:
    y = fg.sin(x) * 2
    y.grad_fn.register_prehook(lambda grads: (_normalized(grads[0]),))
    return y * x


@pytest.mark.parametrize("f", [_hooked_on_tensor, _hooked_on_node])
def test_hooks_see_one_gradient_at_a_time_in_a_batched_pass(f) -> None:
    """Row i of the Jacobian of y * x (y = 2 sin x) seeds y with x_i e_i, which the hook makes sign(x_i) e_i:
    J = diag(2 cos(x) sign(x) + 2 sin(x)). Handed the whole batch, the hook normalized it as one gradient."""
    x = np.array([0.5, -1.0, 2.0])
    expected = np.diag(2 * np.cos(x) * np.sign(x) + 2 * np.sin(x))
    np.testing.assert_allclose(fg.functional.jacobian(f, fg.tensor(x)).data, expected)
    np.testing.assert_allclose(fg.functional.jacobian(f, fg.tensor(x), vectorize=True).data, expected)
    np.testing.assert_allclose(fg.func.jacrev(f)(x), expected)


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_with_batched_gradients_runs_every_kind_of_hook_once_per_row(create_graph: bool) -> None:
    """autograd.grad(is_grads_batched=True) is one backward pass per row of grad_outputs (torch vmaps it): a
    tensor hook, a node's pre- and post-hook and a leaf's hook each see one row, as in the unbatched pass. Handed
    the whole batch, the normalizing hook divided every row by the norm of all of them."""
    def run(grad_outputs, batched):
        x = fg.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = x * 2.0
        y.register_hook(lambda g: g / g.norm())
        x.register_hook(lambda g: g * 3.0)
        z = fg.sin(y)
        z.grad_fn.register_prehook(lambda gs: (gs[0] * 2.0,))
        z.grad_fn.register_hook(lambda grads_in, grads_out: (grads_in[0] + grads_out[0].sum(),))
        return autograd.grad(z, x, grad_outputs, is_grads_batched=batched, create_graph=create_graph)[0]
    vectors = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 1.0, -1.0]])
    batched = run(fg.tensor(vectors), True)
    one_at_a_time = np.stack([run(fg.tensor(v), False).data for v in vectors])
    np.testing.assert_allclose(batched.data, one_at_a_time)
    # row 0 by hand: pre-hook 2 e0, sin's rule 2 cos(1) e0, post-hook + 2 (every element), y's hook normalizes,
    # mul's rule doubles, x's hook triples
    g = 2 * np.cos(1.0) * np.array([1.0, 0.0, 0.0]) + 2.0
    np.testing.assert_allclose(batched.data[0], 6.0 * g / np.linalg.norm(g))
    assert batched.requires_grad is create_graph
