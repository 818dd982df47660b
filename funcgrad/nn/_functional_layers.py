"""``funcgrad.nn.functional``'s layers: linear maps, activations, distances, dropout, normalizations, embedding
and one_hot, composed of table ops (so every derivative order comes from the table)."""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad import ops
from funcgrad.core.grad_mode import no_grad
from funcgrad.core.tensor import Tensor
from funcgrad.creation import Generator, rand
from funcgrad.ops.formulas import constant

__all__ = ["linear", "bilinear", "relu", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "sigmoid", "tanh",
           "softplus", "hardtanh", "hardtanh_", "relu6", "hardsigmoid", "hardswish", "logsigmoid", "softsign",
           "tanhshrink", "glu", "softmax", "log_softmax", "normalize", "cosine_similarity", "pairwise_distance",
           "dropout", "dropout2d", "batch_norm", "layer_norm", "group_norm", "embedding", "one_hot"]

sigmoid = ops.sigmoid
tanh = ops.tanh
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


# ----- linear maps ------------------------------------------------------------------------------
def linear(input: Any, weight: Any, bias: Any = None) -> Any:
    """input @ weight.T + bias, as torch: weight (out_features, in_features)."""
    return ops.linear(input, weight, bias)


def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Any:
    """out[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    out = ops.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


# ----- activations -------------------------------------------------------------------------------
def _applied(fn: Callable[[Any], Any], input: Any, inplace: bool) -> Any:
    """``fn(input)``; with ``inplace``, written into the Tensor ``input`` and ``input`` returned, as torch's in-place
    activations: computed on a clone (the graph keeps the values it saved), then ``copy_`` (``input`` takes the
    result's history and a new version; a leaf that requires grad raises)."""
    return input.copy_(fn(input.clone())) if inplace and isinstance(input, Tensor) else fn(input)


def relu(input: Any, inplace: bool = False) -> Any:
    """max(x, 0) (``inplace``: written into ``input``, as torch)."""
    return _applied(ops.relu, input, inplace)


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Any:
    """x for x > 0, negative_slope * x otherwise (slope at 0, as torch)."""
    return _applied(lambda x: ops.where(ops.gt(x, 0), x, x * negative_slope), input, inplace)


def _elu(x: Any, alpha: float, input_scale: float = 1.0) -> Any:
    """x for x > 0, alpha (exp(input_scale x) - 1) otherwise: at 0 the slope of the exp side, as torch's."""
    # clamp, not minimum: at x = 0 minimum's tie would halve the slope alpha that torch gives there
    negative = ops.clamp(x, max=0.0)  # no exp(large)
    return ops.where(ops.gt(x, 0), x, alpha * ops.expm1(negative if input_scale == 1.0 else negative * input_scale))


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    return _applied(lambda x: _elu(x, alpha), input, inplace)


def selu(input: Any, inplace: bool = False) -> Any:
    """scale * elu(x, alpha) with torch's constants (alpha ~ 1.6733, scale ~ 1.0507)."""
    return _applied(lambda x: _SELU_SCALE * _elu(x, _SELU_ALPHA), input, inplace)


def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:
    """x for x > 0, alpha (exp(x / alpha) - 1) otherwise."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _applied(lambda x: _elu(x, alpha, 1.0 / alpha), input, inplace)


def gelu(input: Any, approximate: str = "none") -> Any:
    """x Phi(x) with Phi the normal CDF; ``approximate="tanh"`` uses torch's tanh formula."""
    if approximate == "tanh":
        return 0.5 * input * (1.0 + ops.tanh(_SQRT_2_OVER_PI * (input + 0.044715 * input ** 3)))
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return 0.5 * input * (1.0 + ops.erf(input * (1.0 / math.sqrt(2.0))))


def silu(input: Any, inplace: bool = False) -> Any:
    """x sigmoid(x)."""
    return _applied(lambda x: x * ops.sigmoid(x), input, inplace)


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as torch)."""
    return ops.where(ops.gt(input * beta, threshold), input, ops.logaddexp(0.0, input * beta) / beta)


def mish(input: Any, inplace: bool = False) -> Any:
    """x tanh(softplus(x))."""
    return _applied(lambda x: x * ops.tanh(ops.logaddexp(0.0, x)), input, inplace)


def _hardtanh(x: Any, min_val: float, max_val: float) -> Any:
    # slope 1 strictly inside, 0 at the bounds (as torch; clamp's would be 1 there)
    return ops.where(ops.le(x, min_val), min_val, ops.where(ops.ge(x, max_val), max_val, x))


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Any:
    """x clamped to [min_val, max_val] (slope 0 at the bounds, as torch)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _applied(lambda x: _hardtanh(x, min_val, max_val), input, inplace)


def hardtanh_(input: Any, min_val: float = -1.0, max_val: float = 1.0) -> Any:
    """hardtanh written into ``input``."""
    return hardtanh(input, min_val, max_val, True)


def relu6(input: Any, inplace: bool = False) -> Any:
    """min(max(x, 0), 6): hardtanh(x, 0, 6) (slope 0 at 0 and 6, as torch)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input: Any, inplace: bool = False) -> Any:
    """relu6(x + 3) / 6 (slope 1/6 strictly between -3 and 3, as torch)."""
    return _applied(lambda x: _hardtanh(x, -3.0, 3.0) * (1.0 / 6.0) + 0.5, input, inplace)


def hardswish(input: Any, inplace: bool = False) -> Any:
    """x hardsigmoid(x)."""
    return _applied(lambda x: x * (_hardtanh(x, -3.0, 3.0) * (1.0 / 6.0) + 0.5), input, inplace)


def logsigmoid(input: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    return -ops.logaddexp(0.0, -input)


def softsign(input: Any) -> Any:
    """x / (1 + |x|)."""
    return input / (1.0 + ops.abs(input))


def tanhshrink(input: Any) -> Any:
    """x - tanh(x)."""
    return input - ops.tanh(input)


def glu(input: Any, dim: int = -1) -> Any:
    """a sigmoid(b) for the halves a, b of ``input`` along ``dim``."""
    shape = np.shape(input)
    if not shape:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % len(shape)} is size {shape[dim]}")
    a, b = ops.chunk(input, 2, dim)
    return a * ops.sigmoid(b)


def _softmax_dim(name: str, ndim: int) -> int:
    """torch's legacy implicit dim, with torch's warning (a 3-d input normalizes over dim 0, the batch)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an "
                  "argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Any, dim: int | None = None, dtype: Any = None) -> Any:
    """exp(x) / sum(exp(x)) along ``dim``."""
    x = input if dtype is None else ops.to_copy(input, np.dtype(dtype))
    return ops.softmax(x, _softmax_dim("softmax", np.ndim(x)) if dim is None else dim)


def log_softmax(input: Any, dim: int | None = None, dtype: Any = None) -> Any:
    """x - logsumexp(x) along ``dim``."""
    x = input if dtype is None else ops.to_copy(input, np.dtype(dtype))
    return ops.log_softmax(x, _softmax_dim("log_softmax", np.ndim(x)) if dim is None else dim)


# ----- distances ---------------------------------------------------------------------------------
def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Any:
    """input / max(||input||_p along ``dim``, eps)."""
    return input / ops.clamp_min(ops.linalg_vector_norm(input, p, dim, True), eps)


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Any:
    """sum(x1 x2) / (max(||x1||, eps) max(||x2||, eps)) along ``dim`` (the inputs broadcast first). As torch, the
    clamp changes the norms' values only: their gradient is the unclamped norms'."""
    shape = np.broadcast_shapes(np.shape(x1), np.shape(x2))

    def unit(x: Any) -> Any:
        norm = ops.linalg_vector_norm(ops.broadcast_to(x, shape), 2, dim, True)
        return ops.broadcast_to(x, shape) / (norm + constant(ops.clamp_min(norm, eps) - norm))
    return ops.sum(unit(x1) * unit(x2), dim)


def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Any:
    """||x1 - x2 + eps||_p along the last dim."""
    return ops.linalg_vector_norm(x1 - x2 + eps, p, -1, keepdim)


# ----- dropout -----------------------------------------------------------------------------------
def _check_probability(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(shape: tuple[int, ...], p: float, dtype: Any, generator: Generator | None) -> np.ndarray:
    """1 / (1 - p) where an element is kept (probability 1 - p), 0 where dropped."""
    if np.dtype(dtype).kind not in "fc":  # an integer mask would truncate 1 / (1 - p) (to 1 for p < 0.5)
        raise RuntimeError(f"result type Float can't be cast to the desired output type {np.dtype(dtype)}")
    if p == 1.0:
        return np.zeros(shape, dtype)
    return ((rand(*shape, generator=generator).data >= p) / (1.0 - p)).astype(dtype)


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False,
            generator: Generator | None = None) -> Any:
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p) (identity unless ``training``).
    ``generator`` (an extension of torch's signature) makes the mask reproducible."""
    _check_probability(p)
    if not training or p == 0.0:
        return input
    mask = _keep_mask(np.shape(input), p, input.dtype, generator)
    return _applied(lambda x: x * mask, input, inplace)


def dropout2d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False,
              generator: Generator | None = None) -> Any:
    """Zero whole channels ((N, C, H, W) or (C, H, W)) with probability ``p``, scaling the rest by 1 / (1 - p).
    Other ranks warn, as torch's, and drop the channels of dim 1: each element of an (N, C) input alone, not the
    whole input at once."""
    _check_probability(p)
    shape = tuple(np.shape(input))
    if len(shape) not in (3, 4):
        if len(shape) < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        warnings.warn(f"dropout2d: Received a {len(shape)}-D input to dropout2d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead.", UserWarning, stacklevel=2)
    if not training or p == 0.0:
        return input
    channels = shape[:-2] if len(shape) == 3 else shape[:2]
    mask = _keep_mask(channels + (1,) * (len(shape) - len(channels)), p, input.dtype, generator)
    return _applied(lambda x: x * mask, input, inplace)


# ----- normalizations ----------------------------------------------------------------------------
def _channel_shape(ndim: int, channels: int) -> tuple[int, ...]:
    return (1, channels) + (1,) * (ndim - 2)


def batch_norm(input: Any, running_mean: Tensor | None, running_var: Tensor | None, weight: Any = None,
               bias: Any = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Any:
    """Normalize each channel (dim 1) by the batch's mean and biased variance when ``training`` (updating the
    running statistics in place with ``momentum``, the variance unbiased), else by the running statistics."""
    shape = np.shape(input)
    dims = (0,) + tuple(range(2, len(shape)))
    channel = _channel_shape(len(shape), shape[1])
    for name, value in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                        ("bias", bias)):
        if value is not None and np.size(value) != shape[1]:  # checked before any statistic changes
            raise RuntimeError(f"{name} should contain {shape[1]} elements not {np.size(value)}")
    mean: Any
    var: Any
    if training:
        count = math.prod(shape) // shape[1]
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {shape}")
        if count == 0:  # an empty batch: an empty output, the running statistics unchanged (torch's)
            mean, var = np.zeros(shape[1], np.result_type(input)), np.ones(shape[1], np.result_type(input))
        else:
            mean = ops.mean(input, dims)
            var = ops.var(input, dims, correction=0)
        if count and running_mean is not None and running_var is not None:
            with no_grad():  # in place, as torch: a state_dict taken before sees the update
                running_mean.mul_(1 - momentum).add_(momentum * _array(mean))
                running_var.mul_(1 - momentum).add_(momentum * _array(var) * (count / (count - 1)))
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mean, var = running_mean, running_var
    out = (input - ops.reshape(mean, channel)) * ops.reshape(ops.rsqrt(var + eps), channel)
    if weight is not None:
        out = out * ops.reshape(weight, channel)
    if bias is not None:
        out = out + ops.reshape(bias, channel)
    return out


def _array(value: Any) -> Any:
    """The array inside a Tensor, or the value as an array."""
    return value.data if isinstance(value, Tensor) else np.asarray(value)


def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    """Normalize over the last ``len(normalized_shape)`` dims (biased variance), then scale and shift."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(np.shape(input)[-len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(np.shape(input))}")
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None and tuple(np.shape(value)) != shape:  # one that broadcasts would mix the samples
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(np.shape(value))} and normalized_shape = {list(shape)}")
    dims = tuple(range(-len(shape), 0))
    mean = ops.mean(input, dims, True)
    out = (input - mean) * ops.rsqrt(ops.var(input, dims, correction=0, keepdim=True) + eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    """Normalize each sample's channels in ``num_groups`` groups, then scale and shift per channel."""
    shape = tuple(np.shape(input))
    for value in (weight, bias):
        if value is not None and np.shape(value) != shape[1:2]:
            raise RuntimeError(f"Expected weight to be a vector of size equal to the number of channels in input, but "
                               f"got weight of shape {list(np.shape(value))} and input of shape {list(shape)}")
    if shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(shape)} and num_groups={num_groups}")
    if math.prod(shape) // num_groups == 1:  # one group of one value normalizes to 0: torch's check
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{[shape[0] * shape[1] // num_groups, num_groups, *shape[2:]]}")
    grouped = ops.reshape(input, (shape[0], num_groups, math.prod(shape[1:]) // num_groups))  # (no -1: N may be 0)
    mean = ops.mean(grouped, -1, True)
    normed = (grouped - mean) * ops.rsqrt(ops.var(grouped, -1, correction=0, keepdim=True) + eps)
    out = ops.reshape(normed, shape)
    channel = _channel_shape(len(shape), shape[1])
    if weight is not None:
        out = out * ops.reshape(weight, channel)
    return out if bias is None else out + ops.reshape(bias, channel)


# ----- lookups -----------------------------------------------------------------------------------
def embedding(input: Any, weight: Any, padding_idx: int | None = None) -> Any:
    """Rows of ``weight`` at the integer ``input``; the row at ``padding_idx`` gets no gradient."""
    index = _array(input)
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {index.dtype} instead")
    if np.ndim(weight) != 2:
        raise RuntimeError("'weight' must be 2-D")
    if index.size and (index.min() < 0 or index.max() >= np.shape(weight)[0]):  # NumPy would take -1 as the last row
        raise IndexError("index out of range in self")
    if padding_idx is not None:
        keep = np.ones((np.shape(weight)[0], 1), weight.dtype)
        keep[padding_idx] = 0
        if isinstance(weight, Tensor):
            weight = weight * keep + weight.detach() * (1 - keep)
    # a Tensor of indices is saved as one (its version checked, as torch's), not as a view of its memory
    return ops.getitem(weight, input if isinstance(input, Tensor) else index)


def one_hot(tensor: Any, num_classes: int = -1) -> Tensor:
    """int64 one-hot rows: out[..., c] = 1 where tensor == c (``num_classes=-1``: max + 1)."""
    index = _array(tensor)
    if index.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if index.size and index.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    n = int(index.max()) + 1 if num_classes == -1 else num_classes
    if index.size and index.max() >= n:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor((index[..., None] == np.arange(n)).astype(np.int64))
