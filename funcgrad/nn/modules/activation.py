"""Activation layers: ``ReLU``, ``LeakyReLU``, ``ELU``, ``GELU``, ``SiLU``, ``Sigmoid``, ``Tanh``, ``Softplus``,
``Softmax``, ``LogSoftmax``."""
from __future__ import annotations

from typing import Any

from funcgrad.nn import functional as F
from funcgrad.nn.modules.module import Module

__all__ = ["ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softplus", "Softmax", "LogSoftmax"]


class ReLU(Module):
    """max(x, 0)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        """relu(input)."""
        return F.relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x for x > 0, negative_slope * x otherwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Any) -> Any:
        """leaky_relu(input)."""
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """x for x > 0, alpha (exp(x) - 1) otherwise."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Any) -> Any:
        """elu(input)."""
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """x Phi(x) (``approximate="tanh"``: torch's tanh form)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Any) -> Any:
        """gelu(input)."""
        return F.gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x sigmoid(x)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        """silu(input)."""
        return F.silu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input: Any) -> Any:
        """sigmoid(input)."""
        return F.sigmoid(input)


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input: Any) -> Any:
        """tanh(input)."""
        return F.tanh(input)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta (x itself above ``threshold``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Any) -> Any:
        """softplus(input)."""
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    """exp(x) / sum(exp(x)) along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        """softmax(input, dim)."""
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """x - logsumexp(x) along ``dim``."""

    def forward(self, input: Any) -> Any:
        """log_softmax(input, dim)."""
        return F.log_softmax(input, self.dim)
