"""``SGD`` with momentum, dampening, Nesterov momentum, weight decay and maximize (torch's formulas)."""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.optim.optimizer import Optimizer, check_non_negative

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, as ``torch.optim.SGD``:

    g = grad + weight_decay p;  b = g (first step) or momentum b + (1 - dampening) g;
    d = g + momentum b (nesterov) or b;  p = p - lr d   (d = g without momentum).

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad import optim
        >>> w = fg.tensor([1.0], requires_grad=True)
        >>> opt = optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward(); opt.step()
        >>> w
        tensor([0.8], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False) -> None:
        check_non_negative(lr, "learning rate")
        check_non_negative(momentum, "momentum value")
        check_non_negative(weight_decay, "weight_decay value")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize})

    def _update(self, group: dict[str, Any], param: np.ndarray, grad: np.ndarray,
                state: dict[str, Any]) -> np.ndarray:
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = np.array(grad, copy=True)
            else:
                buf *= momentum
                buf += (1 - group["dampening"]) * grad
            grad = grad + momentum * buf if group["nesterov"] else buf
        return param - group["lr"] * grad
