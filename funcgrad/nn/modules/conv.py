"""Convolution layers: ``Conv1d``, ``Conv2d``, ``ConvTranspose2d``, initialised as torch."""
from __future__ import annotations

import math
from typing import Any

from funcgrad.nn import functional as F
from funcgrad.nn import init
from funcgrad.nn._functional_conv import as_tuple
from funcgrad.nn.modules.linear import empty_parameter
from funcgrad.nn.modules.module import Module

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]


class _ConvNd(Module):
    """What the convolution layers share: arguments, parameters, initialisation and repr."""

    nd = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 output_padding: Any = 0, dtype: Any = None, generator: Any = None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise NotImplementedError(f"padding_mode={padding_mode!r}: only 'zeros' is supported")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in as_tuple(stride, self.nd, "stride")):
                raise ValueError("padding='same' is not supported for strided convolutions")
        nd = self.nd
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = as_tuple(kernel_size, nd, "kernel_size")
        self.stride, self.dilation = as_tuple(stride, nd, "stride"), as_tuple(dilation, nd, "dilation")
        self.padding = padding if isinstance(padding, str) else as_tuple(padding, nd, "padding")
        self.output_padding = as_tuple(output_padding, nd, "output_padding")
        self.padding_mode = padding_mode
        shape = ((in_channels, out_channels // groups) if self.transposed else
                 (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = empty_parameter(*shape, dtype=dtype)
        if bias:
            self.bias = empty_parameter(out_channels, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters(generator)

    def reset_parameters(self, generator: Any = None) -> None:
        """torch's initialisation: kaiming_uniform_(a=sqrt(5)) for the weight, U(-k, k), k = 1/sqrt(fan_in), for
        the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=generator)
        if self.bias is not None:
            fan_in = init.fan_in(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in else 0
            init.uniform_(self.bias, -bound, bound, generator)

    def extra_repr(self) -> str:
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self.nd:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * self.nd:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self.nd:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class Conv1d(_ConvNd):
    """1-D convolution layer over (N, C_in, L): weight (C_out, C_in / groups, k), as torch."""

    nd = 1

    def forward(self, input: Any) -> Any:
        """conv1d with the layer's weight and bias."""
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    """2-D convolution layer over (N, C_in, H, W): weight (C_out, C_in / groups, kH, kW), as torch.

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad import nn
        >>> nn.Conv2d(1, 4, 3, padding="same")(fg.ones(2, 1, 5, 5)).shape
        (2, 4, 5, 5)
    """

    def forward(self, input: Any) -> Any:
        """conv2d with the layer's weight and bias."""
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    """Transposed convolution layers: torch's argument order (output_padding before groups)."""

    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", dtype: Any = None, generator: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, dtype, generator)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution layer: weight (C_in, C_out / groups, k), as torch."""

    nd = 1

    def forward(self, input: Any) -> Any:
        """conv_transpose1d with the layer's weight and bias."""
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                  self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution layer: weight (C_in, C_out / groups, kH, kW), as torch."""

    def forward(self, input: Any) -> Any:
        """conv_transpose2d with the layer's weight and bias."""
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                  self.groups, self.dilation)
