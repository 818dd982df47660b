"""Activation layers: ``ReLU``, ``LeakyReLU``, ``ELU``, ``GELU``, ``SiLU``, ``Sigmoid``, ``Tanh``, ``Softplus``,
``Softmax``, ``LogSoftmax``, the layers of the other activations of ``nn.functional`` (``Hardtanh``, ``ReLU6``,
``Mish``, ``SELU``, ``CELU``, ...) and the distances ``CosineSimilarity`` and ``PairwiseDistance``."""
from __future__ import annotations

from typing import Any

from funcgrad.nn import functional as F
from funcgrad.nn.modules.module import Module

__all__ = ["ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softplus", "Softmax", "LogSoftmax",
           "Hardtanh", "ReLU6", "Mish", "SELU", "CELU", "Hardsigmoid", "Hardswish", "LogSigmoid", "Softsign",
           "Tanhshrink", "GLU", "CosineSimilarity", "PairwiseDistance"]


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


class Hardtanh(Module):
    """x clamped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Any) -> Any:
        """hardtanh(input)."""
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """x for x > 0, alpha (exp(x / alpha) - 1) otherwise (ELU's options and repr)."""

    def forward(self, input: Any) -> Any:
        """celu(input)."""
        return F.celu(input, self.alpha, self.inplace)


class _InPlaceActivation(Module):
    """A layer applying ``function`` (an activation of nn.functional with only ``inplace``)."""

    function: Any

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        """The activation of input."""
        return type(self).function(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _Activation(Module):
    """A layer applying ``function`` (an activation of nn.functional without options)."""

    function: Any

    def forward(self, input: Any) -> Any:
        """The activation of input."""
        return type(self).function(input)


def _layer(name: str, base: type[Module], function: Any, doc: str) -> Any:
    """The layer class ``name`` applying ``function``."""
    return type(name, (base,), {"function": staticmethod(function), "__doc__": doc, "__module__": __name__})


ReLU6 = _layer("ReLU6", _InPlaceActivation, F.relu6, "min(max(x, 0), 6).")
Mish = _layer("Mish", _InPlaceActivation, F.mish, "x tanh(softplus(x)).")
SELU = _layer("SELU", _InPlaceActivation, F.selu, "scale * elu(x, alpha) with torch's constants.")
Hardsigmoid = _layer("Hardsigmoid", _InPlaceActivation, F.hardsigmoid, "relu6(x + 3) / 6.")
Hardswish = _layer("Hardswish", _InPlaceActivation, F.hardswish, "x relu6(x + 3) / 6.")
LogSigmoid = _layer("LogSigmoid", _Activation, F.logsigmoid, "log(sigmoid(x)).")
Softsign = _layer("Softsign", _Activation, F.softsign, "x / (1 + |x|).")
Tanhshrink = _layer("Tanhshrink", _Activation, F.tanhshrink, "x - tanh(x).")


class GLU(Module):
    """a sigmoid(b) for the halves a, b of the input along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        """glu(input, dim)."""
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class CosineSimilarity(Module):
    """The cosine of the angle between x1 and x2 along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Any, x2: Any) -> Any:
        """cosine_similarity(x1, x2, dim, eps)."""
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """||x1 - x2 + eps||_p along the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Any, x2: Any) -> Any:
        """pairwise_distance(x1, x2, p, eps, keepdim)."""
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
