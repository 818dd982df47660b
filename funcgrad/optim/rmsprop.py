"""``RMSprop`` and ``Adagrad``, torch's formulas."""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.optim.optimizer import Optimizer, check_non_negative

__all__ = ["RMSprop", "Adagrad"]


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop``:

    g = grad + weight_decay p;  s = alpha s + (1 - alpha) g^2;  (centered: a = alpha a + (1 - alpha) g,
    s' = s - a^2);  d = sqrt(s') + eps;  b = momentum b + g / d, p = p - lr b  (or p = p - lr g / d).
    """

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, *,
                 maximize: bool = False) -> None:
        for value, what in ((lr, "learning rate"), (eps, "epsilon value"), (momentum, "momentum value"),
                            (weight_decay, "weight_decay value"), (alpha, "alpha value")):
            check_non_negative(value, what)
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay,
                                  "momentum": momentum, "centered": centered, "maximize": maximize})

    def _update(self, group: dict[str, Any], param: np.ndarray, grad: np.ndarray,
                state: dict[str, Any]) -> np.ndarray:
        alpha, momentum = group["alpha"], group["momentum"]
        if not state:
            state.update(step=0.0, square_avg=np.zeros_like(param))
            if momentum > 0:
                state["momentum_buffer"] = np.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(param)
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        square = state["square_avg"]
        square *= alpha
        square += (1 - alpha) * grad * grad
        if group["centered"]:
            mean = state["grad_avg"]
            mean += (grad - mean) * (1 - alpha)
            avg = np.sqrt(square - mean * mean) + group["eps"]
        else:
            avg = np.sqrt(square) + group["eps"]
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf *= momentum
            buf += grad / avg
            return param - group["lr"] * buf
        return param - group["lr"] * grad / avg


class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad``: with t the step count,

    g = grad + weight_decay p;  s = s + g^2;  p = p - lr / (1 + (t - 1) lr_decay) g / (sqrt(s) + eps).
    """

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10, *, maximize: bool = False) -> None:
        for value, what in ((lr, "learning rate"), (lr_decay, "lr_decay value"), (weight_decay, "weight_decay value"),
                            (initial_accumulator_value, "initial_accumulator_value value"), (eps, "epsilon value")):
            check_non_negative(value, what)
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value, "eps": eps,
                                  "maximize": maximize})

    def _update(self, group: dict[str, Any], param: np.ndarray, grad: np.ndarray,
                state: dict[str, Any]) -> np.ndarray:
        if not state:
            state.update(step=0.0, sum=np.full_like(param, group["initial_accumulator_value"]))
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] += grad * grad
        return param - clr * grad / (np.sqrt(state["sum"]) + group["eps"])
