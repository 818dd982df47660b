"""Loss layers, as torch's: each holds its options (and its class weights as buffers) and calls the loss of
``funcgrad.nn.functional``. torch's deprecated ``size_average``/``reduce`` arguments are not taken."""
from __future__ import annotations

from typing import Any

from funcgrad.core.tensor import Tensor
from funcgrad.nn import functional as F
from funcgrad.nn.modules.module import Module

__all__ = ["L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
           "BCEWithLogitsLoss", "KLDivLoss"]


def _buffer(value: Any) -> Tensor | None:
    return value if value is None or isinstance(value, Tensor) else Tensor(value)


class _Loss(Module):
    """A loss with torch's ``reduction``: ``"mean"``, ``"sum"`` or ``"none"``."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def extra_repr(self) -> str:
        return f"reduction={self.reduction}" if self.reduction != "mean" else ""


class _WeightedLoss(_Loss):
    """A loss with a class (or element) weight, kept as the buffer ``weight``."""

    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", _buffer(weight))


class L1Loss(_Loss):
    """|input - target|, reduced."""

    def forward(self, input: Any, target: Any) -> Any:
        """l1_loss(input, target)."""
        return F.l1_loss(input, target, self.reduction)


class MSELoss(_Loss):
    """(input - target)^2, reduced."""

    def forward(self, input: Any, target: Any) -> Any:
        """mse_loss(input, target)."""
        return F.mse_loss(input, target, self.reduction)


class SmoothL1Loss(_Loss):
    """0.5 d^2 / beta below ``beta``, d - 0.5 beta above, for d = |input - target|."""

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Any, target: Any) -> Any:
        """smooth_l1_loss(input, target)."""
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class HuberLoss(_Loss):
    """0.5 d^2 below ``delta``, delta (d - 0.5 delta) above, for d = |input - target|."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Any, target: Any) -> Any:
        """huber_loss(input, target)."""
        return F.huber_loss(input, target, self.reduction, self.delta)


class NLLLoss(_WeightedLoss):
    """-weight[t] input[n, t] for class indices t (input: log-probabilities)."""

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Any, target: Any) -> Any:
        """nll_loss(input, target)."""
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax over the class dim, then the negative log-likelihood of the targets (class indices: one
    fused op; class probabilities; ``label_smoothing``), as torch's.

    Example:
        >>> import funcgrad as fg
        >>> loss = CrossEntropyLoss()(fg.zeros(2, 4, requires_grad=True), fg.tensor([0, 3]))
        >>> round(loss.item(), 4), loss.grad_fn.name()
        (1.3863, 'CrossEntropyBackward0')
    """

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Any, target: Any) -> Any:
        """cross_entropy(input, target)."""
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing)


class BCELoss(_WeightedLoss):
    """-(t log x + (1 - t) log(1 - x)) for probabilities x."""

    def forward(self, input: Any, target: Any) -> Any:
        """binary_cross_entropy(input, target)."""
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """binary_cross_entropy of sigmoid(input), computed stably; ``pos_weight`` weighs the positive term."""

    def __init__(self, weight: Any = None, reduction: str = "mean", pos_weight: Any = None) -> None:
        super().__init__(weight, reduction)
        self.register_buffer("pos_weight", _buffer(pos_weight))

    def forward(self, input: Any, target: Any) -> Any:
        """binary_cross_entropy_with_logits(input, target)."""
        return F.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction, self.pos_weight)


class KLDivLoss(_Loss):
    """t (log t - input) pointwise (input: log-probabilities), or exp(t) (t - input) with ``log_target``."""

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(reduction)
        self.log_target = log_target

    def forward(self, input: Any, target: Any) -> Any:
        """kl_div(input, target)."""
        return F.kl_div(input, target, self.reduction, self.log_target)
