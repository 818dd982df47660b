"""``funcgrad.nn.functional``'s losses, with torch's reductions, weights and conventions, composed of
table ops (so every derivative order comes from the table)."""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from funcgrad import ops
from funcgrad.core.tensor import Tensor
from funcgrad.nn._functional_layers import _array, log_softmax
from funcgrad.ops.nn_kernels import check_class_weight, class_dim, class_targets

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"]


def _reduce(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return ops.mean(loss)
    if reduction == "sum":
        return ops.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


# ----- regression --------------------------------------------------------------------------------
def _difference(input: Any, target: Any) -> Any:
    """input - target, warning as torch when their shapes differ (a (N, 1) output against (N,) targets
    broadcasts to (N, N): a silently wrong loss)."""
    if np.shape(input) != np.shape(target):
        warnings.warn(f"Using a target size ({np.shape(target)}) that is different to the input size "
                      f"({np.shape(input)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", UserWarning, stacklevel=3)
    return input - target


def mse_loss(input: Any, target: Any, reduction: str = "mean") -> Any:
    """(input - target)^2, reduced."""
    return _reduce(_difference(input, target) ** 2, reduction)


def l1_loss(input: Any, target: Any, reduction: str = "mean") -> Any:
    """|input - target|, reduced (gradient 0 where they are equal, as torch)."""
    return _reduce(ops.abs(_difference(input, target)), reduction)


def smooth_l1_loss(input: Any, target: Any, reduction: str = "mean", beta: float = 1.0) -> Any:
    """0.5 d^2 / beta where d = |input - target| < beta, else d - 0.5 beta (``beta=0``: l1_loss). The square is
    of input - target itself, not of |.|: its second derivative 1 / beta holds at input == target too."""
    if beta < 0.0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction)
    diff = _difference(input, target)
    d = ops.abs(diff)
    return _reduce(ops.where(ops.lt(d, beta), 0.5 * diff * diff / beta, d - 0.5 * beta), reduction)


def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0) -> Any:
    """0.5 d^2 where d = |input - target| < delta, else delta (d - 0.5 delta)."""
    if delta <= 0.0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    diff = _difference(input, target)
    d = ops.abs(diff)
    return _reduce(ops.where(ops.lt(d, delta), 0.5 * diff * diff, delta * (d - 0.5 * delta)), reduction)


# ----- classification ----------------------------------------------------------------------------
def _weights(weight: Any, op: str) -> Any:
    """A class weight as an array of its own (None stays None): torch's ``op`` has no derivative for its weight, so one
    that requires grad raises torch's error rather than get no gradient, and a later in-place change of the caller's
    weight cannot reach the saved one (the gradient is the loss's)."""
    if isinstance(weight, Tensor) and weight.requires_grad:
        raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument 'weight'. This input "
                           "cannot have requires_grad True.")
    return None if weight is None else np.array(_array(weight), copy=True)


def _picked(logp: Any, index: np.ndarray) -> Any:
    """logp[n, target[n], ...]: the class dim (1, or 0 for a single sample) indexed by the targets."""
    dim = class_dim(logp)
    return ops.squeeze(ops.take_along_dim(logp, np.expand_dims(index, dim), dim), dim)


def nll_loss(input: Any, target: Any, weight: Any = None, ignore_index: int = -100, reduction: str = "mean") -> Any:
    """-weight[t] input[n, t] for class indices t = target[n] (input: log-probabilities (N, C, ...) or (C,));
    ``mean`` divides by the summed weights of the counted targets, as torch."""
    index, w = class_targets(input, _array(target), _weights(weight, "nll_loss_forward"), ignore_index)
    loss = -_picked(input, index) * w
    if reduction == "mean":
        return _class_mean(loss, w, _array(target) != ignore_index)
    return _reduce(loss, reduction)


def _class_mean(loss: Any, w: np.ndarray, counted: np.ndarray) -> Any:
    """sum(loss) / sum(w) over the counted targets, torch's ``mean``; when every target is ignored, torch's loss is
    NaN (0 / 0) and its gradient 0 (no target is counted), not the NaN of 1 / 0 times the ignored targets' 0."""
    if counted.any():
        return ops.sum(loss) / w.sum()
    return ops.sum(loss) + np.nan


def cross_entropy(input: Any, target: Any, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Any:
    """log_softmax over the class dim, then nll_loss (integer targets: one fused op of the table, as torch's)
    or -sum_c weight[c] p[c] log q[c] (class probabilities, the target's shape); ``label_smoothing`` eps mixes
    the target with uniform eps / C."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if not label_smoothing and _array(target).dtype.kind != "f":
        # a Tensor target is saved as one (its version checked, as torch's), the weight as a copy
        return ops.cross_entropy(input, target if isinstance(target, Tensor) else _array(target),
                                 _weights(weight, "nll_loss_forward"), ignore_index, reduction)
    dim = class_dim(input)
    classes = np.shape(input)[dim]
    check_class_weight(weight, classes)
    logp = log_softmax(input, dim)
    shape = (classes,) + (1,) * (np.ndim(input) - dim - 1)
    if _array(target).dtype.kind == "f":  # class probabilities: the weight is differentiable, as in torch's composite
        if np.shape(target) != np.shape(input):
            raise RuntimeError("Expected target size to match input size for class probabilities")
        if ignore_index >= 0:  # it would be ignored silently
            raise RuntimeError("ignore_index is not supported for floating point target")
        p = target * (1.0 - label_smoothing) + label_smoothing / classes if label_smoothing else target
        w = weight if weight is None or isinstance(weight, Tensor) else _weights(weight, "cross_entropy")
        terms = logp * p if w is None else logp * p * ops.reshape(w, shape)
        loss = -ops.sum(terms, dim)
        if reduction == "mean":
            return ops.sum(loss) / (math.prod(np.shape(input)) // classes)  # an int: float32 stays float32
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, ignore_index, reduction)
    w = _weights(weight, "nll_loss_forward")
    _, counted_weights = class_targets(input, _array(target), w, ignore_index)
    counted = _array(target) != ignore_index
    smooth = -ops.sum(logp if w is None else logp * w.reshape(shape), dim) * counted
    if reduction == "mean":
        smooth = _class_mean(smooth, counted_weights, counted)
    else:
        smooth = _reduce(smooth, reduction)
    return (1.0 - label_smoothing) * nll + smooth * (label_smoothing / classes)


def binary_cross_entropy(input: Any, target: Any, weight: Any = None, reduction: str = "mean") -> Any:
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch; ``input`` are probabilities. One op of
    the table, as torch's: d/dx = (x - t) / max(x (1 - x), 1e-12), finite where x is 0 or 1."""
    x = _array(input)
    if x.size and (x.min() < 0 or x.max() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if np.shape(target) != np.shape(input):
        raise ValueError(f"Using a target size ({np.shape(target)}) that is different to the input size "
                         f"({np.shape(input)}) is deprecated. Please ensure they have the same size.")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return ops.binary_cross_entropy(input, target, _weights(weight, "binary_cross_entropy"), reduction)


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None, reduction: str = "mean",
                                     pos_weight: Any = None) -> Any:
    """binary_cross_entropy of sigmoid(input), computed stably: (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x)."""
    if np.shape(target) != np.shape(input):
        raise ValueError(f"Target size ({np.shape(target)}) must be the same as input size ({np.shape(input)})")
    softplus_neg = ops.logaddexp(0.0, -input)  # log(1 + exp(-x)), smooth and stable
    scale = 1.0 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input + scale * softplus_neg
    return _reduce(loss if weight is None else loss * weight, reduction)


def kl_div(input: Any, target: Any, reduction: str = "mean", log_target: bool = False) -> Any:
    """Pointwise t (log t - input) (0 where t = 0), or exp(t) (t - input) with ``log_target``; input holds
    log-probabilities. ``reduction="batchmean"`` divides the sum by the batch size."""
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:
        positive = ops.gt(target, 0)
        loss = ops.where(positive, target * ops.log(ops.where(positive, target, 1.0)), 0.0) - target * input
    if reduction == "batchmean":
        return ops.sum(loss) / (np.shape(input)[0] if np.ndim(input) else 1)
    return _reduce(loss, reduction)
