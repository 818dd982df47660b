"""``Adam`` (with amsgrad and L2 weight decay) and ``AdamW`` (decoupled weight decay), torch's formulas."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad.optim.optimizer import Optimizer, check_non_negative

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam``: with t the step count,

    g = grad + weight_decay p;  m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2;
    v_max = max(v_max, v) (amsgrad);  p = p - lr / (1 - beta1^t) m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
    """

    decoupled = False

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False) -> None:
        check_non_negative(lr, "learning rate")
        check_non_negative(eps, "epsilon value")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        check_non_negative(weight_decay, "weight_decay value")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": amsgrad, "maximize": maximize})

    def _update(self, group: dict[str, Any], param: np.ndarray, grad: np.ndarray,
                state: dict[str, Any]) -> np.ndarray:
        lr, (beta1, beta2), eps, decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if not state:
            state.update(step=0.0, exp_avg=np.zeros_like(param), exp_avg_sq=np.zeros_like(param))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        if self.decoupled:
            param = param * (1 - lr * decay)
        elif decay:
            grad = grad + decay * param
        state["step"] += 1
        t = state["step"]
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m += (grad - m) * (1 - beta1)
        v *= beta2
        v += (1 - beta2) * grad * grad
        if group["amsgrad"]:
            np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
            v = state["max_exp_avg_sq"]
        denom = np.sqrt(v) / math.sqrt(1 - beta2 ** t) + eps
        return param - (lr / (1 - beta1 ** t)) * m / denom


class AdamW(Adam):
    """Adam with decoupled weight decay, as ``torch.optim.AdamW``: p = p (1 - lr weight_decay) before Adam's step
    (no L2 term in the gradient); weight_decay defaults to 0.01."""

    decoupled = True

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
