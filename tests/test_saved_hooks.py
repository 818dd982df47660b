"""saved_tensors_hooks: what ops and custom Functions save goes through pack/unpack, per thread."""
from __future__ import annotations

import threading

import numpy as np

import funcgrad as fg
from funcgrad.autograd import Function
from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.graph import saved_tensors_hooks


def recording_hooks(log: list[str]) -> saved_tensors_hooks:
    def pack(t: fg.Tensor) -> np.ndarray:
        log.append("pack")
        return t.data.copy()

    def unpack(a: np.ndarray) -> fg.Tensor:
        log.append("unpack")
        return fg.tensor(a)

    return saved_tensors_hooks(pack, unpack)


def test_pack_on_save_unpack_on_backward() -> None:
    log: list[str] = []
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    with recording_hooks(log):
        y = (fg.exp(x) * x).sum()  # exp saves its output; mul saves both inputs
    assert log == ["pack"] * 3 and not DISPATCH.active
    y.backward()
    assert log.count("unpack") == 3
    np.testing.assert_allclose(x.grad.data, np.exp(x.data) * (1 + x.data))


def test_compressed_saved_tensors_give_close_gradients() -> None:
    x = fg.tensor([0.3, 1.7], requires_grad=True)
    with saved_tensors_hooks(lambda t: t.data.astype(np.float16), lambda a: fg.tensor(a, dtype=np.float64)):
        y = (x * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.data, 2 * x.data, rtol=1e-3)


def test_double_backward_through_unpacked_tensors() -> None:
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        (g,) = fg.autograd.grad((x ** 3).sum(), x, create_graph=True)
        (h,) = fg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.data, 6 * x.data)


def test_custom_function_saves_through_hooks() -> None:
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    log: list[str] = []
    x = fg.tensor([3.0], requires_grad=True)
    with recording_hooks(log):
        y = Square.apply(x)
    y.backward()
    assert log == ["pack", "unpack"]
    np.testing.assert_allclose(x.grad.data, [6.0])


def test_hooks_belong_to_the_thread_that_installed_them() -> None:
    log: list[str] = []

    def other_thread() -> None:
        x = fg.tensor([1.0], requires_grad=True)
        (x * x).sum().backward()

    with recording_hooks(log):
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
    assert log == []
