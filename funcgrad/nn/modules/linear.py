"""``Identity``, ``Linear``, ``Bilinear``, ``Flatten``, ``Unflatten``: torch's layers and initialisation."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import ops
from funcgrad.nn import functional as F
from funcgrad.nn import init
from funcgrad.nn.modules.module import Module
from funcgrad.nn.parameter import Parameter

__all__ = ["Identity", "Linear", "Bilinear", "Flatten", "Unflatten"]


def empty_parameter(*shape: int, dtype: Any = None) -> Parameter:
    """An uninitialised (zero) parameter of ``shape`` (float64 unless ``dtype``), to be filled by ``init``."""
    return Parameter(np.zeros(shape, dtype or np.float64))


class Identity(Module):
    """Returns its input (any constructor arguments are ignored, as torch)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        """The input itself."""
        return input


class Linear(Module):
    """y = x Wᵀ + b with W (out_features, in_features), initialised as torch (U(-k, k), k = 1/sqrt(in_features)).

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad import nn
        >>> nn.Linear(3, 2)(fg.ones(4, 3)).shape
        (4, 2)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype: Any = None,
                 generator: Any = None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = empty_parameter(out_features, in_features, dtype=dtype)
        if bias:
            self.bias = empty_parameter(out_features, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters(generator)

    def reset_parameters(self, generator: Any = None) -> None:
        """torch's initialisation: kaiming_uniform_(a=sqrt(5)) for the weight, U(-k, k) for the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=generator)
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound, generator)

    def forward(self, input: Any) -> Any:
        """input @ weight.T + bias."""
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """y[o] = x1ᵀ W[o] x2 + b[o], initialised U(-k, k) with k = 1/sqrt(in1_features), as torch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 dtype: Any = None, generator: Any = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = empty_parameter(out_features, in1_features, in2_features, dtype=dtype)
        if bias:
            self.bias = empty_parameter(out_features, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        bound = 1 / math.sqrt(in1_features)
        init.uniform_(self.weight, -bound, bound, generator)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound, generator)

    def forward(self, input1: Any, input2: Any) -> Any:
        """The bilinear form of the two inputs, plus the bias."""
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Flatten(Module):
    """Flatten dims ``start_dim`` to ``end_dim`` into one (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Any) -> Any:
        """The flattened input."""
        return ops.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expand dim ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: int, unflattened_size: tuple[int, ...]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Any) -> Any:
        """The unflattened input."""
        return ops.unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
