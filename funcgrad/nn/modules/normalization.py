"""Normalization layers: ``BatchNorm1d/2d`` (running statistics as buffers), ``LayerNorm``, ``GroupNorm``."""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core.tensor import Tensor
from funcgrad.nn import functional as F
from funcgrad.nn.modules.module import Module
from funcgrad.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm"]


class _BatchNorm(Module):
    """Batch normalization over the channel dim (1); in training mode the batch statistics normalize and
    update ``running_mean``/``running_var`` (``momentum``; None for a cumulative average), in eval mode the
    running statistics normalize."""

    dims: tuple[int, ...] = (2, 3)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, dtype: Any = None) -> None:
        super().__init__()
        dtype = dtype or np.float64
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(np.ones(num_features, dtype))
            self.bias = Parameter(np.zeros(num_features, dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, dtype)))
            self.register_buffer("running_var", Tensor(np.ones(num_features, dtype)))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, np.int64)))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches seen."""
        if self.track_running_stats:
            self.running_mean.zero_()  # in place, as torch
            self.running_var.fill_(1.0)
            self.num_batches_tracked.zero_()

    def forward(self, input: Any) -> Any:
        """Normalize ``input`` (N, C, ...) per channel."""
        if np.ndim(input) not in self.dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self.dims)} input (got {np.ndim(input)}D input)")
        momentum = 0.0 if self.momentum is None else self.momentum
        use_batch = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                momentum = 1.0 / float(self.num_batches_tracked.data)
        update = self.training and self.track_running_stats
        return F.batch_norm(input, self.running_mean if update or not use_batch else None,
                            self.running_var if update or not use_batch else None, self.weight, self.bias, use_batch,
                            momentum, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs."""

    dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs."""

    dims = (4,)


class LayerNorm(Module):
    """Normalize over the last dims (``normalized_shape``), then scale and shift elementwise."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        dtype = dtype or np.float64
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.register_parameter("weight", Parameter(np.ones(shape, dtype)) if elementwise_affine else None)
        self.register_parameter("bias", Parameter(np.zeros(shape, dtype)) if elementwise_affine and bias else None)

    def forward(self, input: Any) -> Any:
        """layer_norm with the layer's parameters."""
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalize each sample's channels in ``num_groups`` groups, then scale and shift per channel."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 dtype: Any = None) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        dtype = dtype or np.float64
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.register_parameter("weight", Parameter(np.ones(num_channels, dtype)) if affine else None)
        self.register_parameter("bias", Parameter(np.zeros(num_channels, dtype)) if affine else None)

    def forward(self, input: Any) -> Any:
        """group_norm with the layer's parameters."""
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
