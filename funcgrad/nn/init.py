"""Parameter initialisation, as ``torch.nn.init``: each function fills a tensor in place (without
recording a gradient) and returns it. Random draws come from ``generator`` or funcgrad's default one
(``funcgrad.manual_seed``)."""
from __future__ import annotations

import math
import warnings

import numpy as np

from funcgrad.core.tensor import Tensor
from funcgrad.creation import Generator, rand, randn

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "eye_", "xavier_uniform_",
           "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "trunc_normal_", "fan_in"]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """torch's recommended gain for a nonlinearity (e.g. sqrt(2) for relu)."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                        "conv_transpose3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fill(tensor: Tensor, values: np.ndarray | float) -> Tensor:
    """Write ``values`` into the tensor's array in place (no autograd record; the version is bumped)."""
    tensor.data[...] = values
    tensor._version_counter[0] += 1
    return tensor


def _fans(tensor: Tensor) -> tuple[int, int]:
    shape = tensor.shape
    if len(shape) < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _random(tensor: Tensor, what: str) -> None:
    """torch's error for random values into an integer tensor (which would silently round them)."""
    if tensor.dtype.kind not in "fc":
        raise NotImplementedError(f"{what} is not implemented for {tensor.dtype}: random initialisation needs a "
                                  f"floating-point tensor")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill with U(a, b)."""
    _random(tensor, "uniform_")
    return _fill(tensor, a + (b - a) * rand(*tensor.shape, generator=generator).data)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill with N(mean, std^2)."""
    _random(tensor, "normal_")
    return _fill(tensor, mean + std * randn(*tensor.shape, generator=generator).data)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Generator | None = None) -> Tensor:
    """Fill with N(mean, std^2) truncated to [a, b] (redrawn until inside)."""
    _random(tensor, "trunc_normal_")
    values = mean + std * randn(*tensor.shape, generator=generator).data
    outside = (values < a) | (values > b)
    while outside.any():
        values[outside] = mean + std * randn(int(outside.sum()), generator=generator).data
        outside = (values < a) | (values > b)
    return _fill(tensor, values)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return _fill(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return _fill(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a matrix with the identity."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(tensor.shape[0], tensor.shape[1]))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """U(-a, a) with a = gain sqrt(6 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """N(0, std^2) with std = gain sqrt(2 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    """gain / sqrt(fan); 0 for a tensor without elements (torch warns and leaves it: there is nothing to fill)."""
    if tensor.size == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return 0.0
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """U(-b, b) with b = gain sqrt(3 / fan) (He); torch's Linear and Conv use a = sqrt(5)."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan) (He)."""
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def fan_in(tensor: Tensor) -> int:
    """The number of inputs each output of a weight sees (in_features, or C_in / groups times the kernel)."""
    return _fans(tensor)[0]

