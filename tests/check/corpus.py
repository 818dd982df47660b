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


# ---- three-valued categories: correct but hard to check, and localized or subtle bugs ----

def _at(dtype: Any, values: Any) -> fg.Tensor:
    return fg.tensor(np.asarray(values, dtype=np.float64), dtype=dtype, requires_grad=True)


def _uniform(dtype: Any, low: float, high: float, n: int, seed: int = 0) -> fg.Tensor:
    return _at(dtype, np.random.default_rng(seed).uniform(low, high, n))


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        out = fg.sigmoid(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out * (1 - out)


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


class SquareByLayout(Square):
    """x * x whose backward is off by 50% when x is not C-contiguous (as a backward writing through
    ``zeros_like(x).reshape(-1)`` is: a copy for a transposed x)."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x * (1.0 if x.data.flags.c_contiguous else 1.5)


class Log(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.log(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / x


class SumOneDirection(Function):
    """x.sum() with a jvp written for one tangent (torch's contract): ``t.sum()`` would sum a batch of tangents
    away, so batched forward mode must push one direction at a time."""

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.sum()

    @staticmethod
    def backward(ctx, g):
        return g * fg.ones(ctx.shape)

    @staticmethod
    def jvp(ctx, t):
        return t.sum()


class Sin(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * fg.cos(x)


class Relu(Function):
    """Subgradient 0 at 0, as torch."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.relu(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x > 0)


class Maximum(Function):
    """Elementwise max of two inputs; a tie sends the gradient to x."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return fg.maximum(x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * (x >= y), g * (x < y)


class Jitter(Function):
    """Right derivative, but the forward adds unseeded noise (as an unseeded dropout would)."""

    @staticmethod
    def forward(ctx, x):
        return x * 2.0 + fg.tensor(np.random.default_rng().standard_normal(x.shape) * 1e-9, dtype=x.dtype)

    @staticmethod
    def backward(ctx, g):
        return 2.0 * g


class SinPiMissingPi(Function):
    """sin(pi x) whose backward forgets the chain rule's pi."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.sin(np.pi * x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * fg.cos(np.pi * x)


class TransposedMatVec(Function):
    """W @ x whose W gradient is outer(x, g) instead of outer(g, x)."""

    @staticmethod
    def forward(ctx, w, x):
        ctx.save_for_backward(w, x)
        return fg.matmul(w, x)

    @staticmethod
    def backward(ctx, g):
        w, x = ctx.saved_tensors
        return fg.outer(x, g), fg.matmul(w.T, g)


class FirstRowBias(Function):
    """x (m, n) + b (n,) whose b gradient takes the first row of g instead of summing the rows."""

    @staticmethod
    def forward(ctx, x, b):
        return x + b

    @staticmethod
    def backward(ctx, g):
        return g, g[0]


class Product(Function):
    """x * y, saving both (the base of the product Functions whose backward is wrong in some way)."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * fg.conj(y), g * fg.conj(x)


class SwappedMul(Product):
    """x * y whose backward returns each input's gradient for the other."""

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * x, g * y


class SoftplusRegion(Function):
    """softplus whose backward uses exp(x) for sigmoid(x) below -3 (wrong by up to 5%, only there)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.log1p(fg.exp(x))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * fg.where(x < -3, fg.exp(x), fg.sigmoid(x))


class OneElementWrong(Function):
    """sin whose derivative is 1% off at one element out of 1000."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        scale = np.ones(x.shape)
        scale[417] = 1.01
        return g * fg.cos(x) * fg.tensor(scale, dtype=x.dtype)


class LogOnePercent(Function):
    """log whose derivative is 1% too large everywhere, checked next to its singularity."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fg.log(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 1.01 / x


@dataclass
class Category:
    """A corpus entry for the three-valued checks: what it shows, its case and dtype, the verdicts it may get and
    a text its report must contain (a diagnosis for a bug, a reason for an inconclusive case)."""

    name: str
    case: Case
    dtype: Any
    allowed: tuple[str, ...]
    text: str = ""
    order: int = 1


HARD_RIGHT = [
    Category("float32 sigmoid", Case(Sigmoid, lambda d: (_uniform(d, -6, 6, 20),)), np.float32, ("pass",)),
    Category("float32 log", Case(Log, lambda d: (_uniform(d, 0.5, 3, 20),)), np.float32, ("pass",)),
    Category("inputs near 1e8", Case(Square, lambda d: (_at(d, 1e8 + np.arange(5.0) * 1e3),)), np.float64,
             ("pass",)),
    Category("log near 1e8", Case(Log, lambda d: (_at(d, 1e8 * np.array([1.0, 1.5, 3.0])),)), np.float64,
             ("pass",)),
    Category("log near its singularity", Case(Log, lambda d: (_at(d, [1e-3, 2e-3, 5e-4]),)), np.float64,
             ("pass",)),
    Category("3e-7 from a kink", Case(Relu, lambda d: (_at(d, [3e-7, -3e-7, 0.5, -0.8]),)), np.float64,
             ("pass", "inconclusive")),
    Category("at a kink", Case(Relu, lambda d: (_at(d, [0.0, 0.5, -0.8]),)), np.float64, ("inconclusive",),
             "kink within the step"),
    Category("max near a tie", Case(Maximum, lambda d: (_at(d, [1.0, -2.0]), _at(d, [1.0 + 3e-7, -2.0 - 3e-7]))),
             np.float64, ("pass", "inconclusive")),
    Category("non-deterministic", Case(Jitter, lambda d: (_x(d, 4),)), np.float64, ("inconclusive",),
             "non-deterministic"),
    Category("float32 resolution at 1e8", Case(Sin, lambda d: (_at(d, [1e8, 3e8]),)), np.float32,
             ("inconclusive",), "resolution exhausted"),
]
BUGS = [
    Category("wrong sign", Case(WrongSign, lambda d: (_x(d, 5),)), np.float64, ("fail",), "wrong sign"),
    Category("missing factor 2", Case(MissingFactor, lambda d: (_x(d, 5),)), np.float64, ("fail",),
             "missing factor 2"),
    Category("missing factor pi", Case(SinPiMissingPi, lambda d: (_x(d, 5),)), np.float64, ("fail",),
             "missing factor pi"),
    Category("float32 wrong sign", Case(WrongSign, lambda d: (_x(d, 5),)), np.float32, ("fail",), "wrong sign"),
    Category("transposed", Case(TransposedMatVec, lambda d: (_x(d, 3, 3), _x(d, 3, seed=1))), np.float64,
             ("fail",), "transposed"),
    Category("missing broadcast reduction (mean)", Case(WrongBroadcast, lambda d: (_x(d, 4, 3), _x(d, 3, seed=1))),
             np.float64, ("fail",), "missing broadcast reduction"),
    Category("missing broadcast reduction (one row)",
             Case(FirstRowBias, lambda d: (_x(d, 4, 3), _x(d, 3, seed=1))), np.float64, ("fail",),
             "missing broadcast reduction"),
    Category("gradient of the wrong input", Case(SwappedMul, lambda d: (_x(d, 4), _x(d, 4, seed=1))), np.float64,
             ("fail",), "gradient of the wrong input"),
    Category("ignores grad_output", Case(IgnoresGradOutput, lambda d: (_x(d, 4),)), np.float64, ("fail",),
             "ignores grad_output"),
    Category("wrong only for x < -3", Case(SoftplusRegion, lambda d: (_uniform(d, -6, 4, 200),)), np.float64,
             ("fail",), "input 0 < -3"),
    Category("float32 wrong only for x < -3", Case(SoftplusRegion, lambda d: (_uniform(d, -6, 4, 200),)),
             np.float32, ("fail",), "input 0 < -3"),
    Category("one element of 1000", Case(OneElementWrong, lambda d: (_x(d, 1000),)), np.float64, ("fail",),
             "wrong only at input 0 (417,)"),
    Category("float32 one element of 1000", Case(OneElementWrong, lambda d: (_x(d, 1000),)), np.float32,
             ("fail",), "wrong only at input 0 (417,)"),
    Category("1% next to a singularity", Case(LogOnePercent, lambda d: (_at(d, [1e-3, 2e-3, 5e-4]),)), np.float64,
             ("fail",), "analytical = 1.01 x numerical"),
    Category("float32 1% next to a singularity", Case(LogOnePercent, lambda d: (_at(d, [1e-3, 2e-3, 5e-4]),)),
             np.float32, ("fail",), "analytical = 1.01 x numerical"),
    Category("wrong only at second order", Case(WrongSecondOrder, lambda d: (_x(d, 3),)), np.float64, ("fail",),
             "wrong only at second order", order=2),
    Category("NumPy backward at second order", Case(NumpyBackward, lambda d: (_x(d, 3),)), np.float64, ("fail",),
             "wrong only at second order", order=2),
]
