"""Custom Functions for testing the checkers: ``RIGHT`` ones with correct derivatives and ``WRONG`` ones, each
subtly wrong in one way. ``Case.call`` is what gradcheck differentiates; ``Case.inputs(dtype)`` its arguments."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import funcgrad as fg
from funcgrad.autograd import Function, once_differentiable


def _x(dtype: Any, *shape: int, seed: int = 0, positive: bool = False) -> fg.Tensor:
    data = np.random.default_rng(seed).uniform(0.5, 1.5, shape) if positive else \
        np.random.default_rng(seed).standard_normal(shape)
    return fg.tensor(data, dtype=dtype, requires_grad=True)


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        out = fg.exp(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out


class AddBias(Function):
    """x (m, n) + b (n,): b's gradient sums the broadcast rows."""

    @staticmethod
    def forward(ctx, x, b):
        return x + b

    @staticmethod
    def backward(ctx, g):
        return g, fg.sum(g, 0)


class Scale(Function):
    """A non-tensor argument, which gets None."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


class SinCos(Function):
    """Two outputs, and None (not zeros) for an output that got no gradient."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return fg.sin(x), fg.cos(x)

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        (x,) = ctx.saved_tensors
        grad = None
        if g_sin is not None:
            grad = g_sin * fg.cos(x)
        if g_cos is not None:
            grad = -g_cos * fg.sin(x) if grad is None else grad - g_cos * fg.sin(x)
        return grad


class DoubleInPlace(Function):
    """Doubles its input in place and says so."""

    @staticmethod
    def forward(ctx, x):
        x.data *= 2
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return 2 * g


class CubeOnce(Function):
    """A NumPy backward marked once_differentiable: right first order, no second order."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return fg.tensor(3 * x.data ** 2 * g.data)


# ---- wrong ones ----

class WrongSign(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return -g * fg.cos(x)


class MissingFactor(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


class WrongBroadcast(Function):
    """Averages instead of summing over the broadcast rows."""

    @staticmethod
    def forward(ctx, x, b):
        return x + b

    @staticmethod
    def backward(ctx, g):
        return g, fg.mean(g, 0)


class IgnoresGradOutput(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return fg.cos(x)


class WrongSecondOrder(Function):
    """The first derivative is right, but computed from a constant copy of x, so it has no x-dependence."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return fg.tensor(3 * x.data ** 2) * g


class NumpyBackward(Function):
    """A NumPy backward not marked once_differentiable: right first order, and a second order that is silently
    zero (its result is a constant to autograd)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return fg.tensor(3 * x.data ** 2 * g.data)


class Noisy(Function):
    """A backward with tiny run-to-run noise (as an atomic-add reduction would have)."""

    rng = np.random.default_rng(0)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * fg.cos(x) + fg.tensor(Noisy.rng.standard_normal(x.shape) * 1e-9, dtype=x.dtype)


class ForgotMarkDirty(Function):
    """Doubles its input in place without ctx.mark_dirty."""

    @staticmethod
    def forward(ctx, x):
        x.data *= 2
        return x

    @staticmethod
    def backward(ctx, g):
        return 2 * g


@dataclass
class Case:
    """A Function, how gradcheck calls it, and its inputs in a dtype."""

    function: type[Function]
    inputs: Callable[[Any], tuple[Any, ...]]
    call: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        self.call = self.call or self.function.apply

    @property
    def name(self) -> str:
        return self.function.__name__


def _through_exp(function: type[Function]) -> Callable[..., Any]:
    """Apply to exp(x), whose saved output a silent in-place change corrupts."""
    def call(x: fg.Tensor) -> fg.Tensor:
        return function.apply(fg.exp(x))
    return call


def _on_copy(function: type[Function]) -> Callable[..., Any]:
    """Apply to a non-leaf copy, as an in-place Function must be."""
    def call(x: fg.Tensor) -> fg.Tensor:
        return function.apply(x * 1.0)
    return call


RIGHT = [
    Case(Exp, lambda d: (_x(d, 3),)),
    Case(AddBias, lambda d: (_x(d, 2, 3), _x(d, 3, seed=1))),
    Case(Scale, lambda d: (_x(d, 4), 2.5)),
    Case(SinCos, lambda d: (_x(d, 3),)),
    Case(DoubleInPlace, lambda d: (_x(d, 3),), _on_copy(DoubleInPlace)),
]
WRONG = [
    Case(WrongSign, lambda d: (_x(d, 3),)),
    Case(MissingFactor, lambda d: (_x(d, 3),)),
    Case(WrongBroadcast, lambda d: (_x(d, 2, 3), _x(d, 3, seed=1))),
    Case(IgnoresGradOutput, lambda d: (_x(d, 3),)),
    Case(ForgotMarkDirty, lambda d: (_x(d, 3),), _through_exp(ForgotMarkDirty)),
]
SECOND_ORDER_WRONG = Case(WrongSecondOrder, lambda d: (_x(d, 3),))
NUMPY_BACKWARD = Case(NumpyBackward, lambda d: (_x(d, 3),))
NOISY = Case(Noisy, lambda d: (_x(d, 3),))
ONCE = Case(CubeOnce, lambda d: (_x(d, 3),))
