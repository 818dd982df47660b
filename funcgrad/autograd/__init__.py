"""Reverse-mode automatic differentiation: ``backward``, ``grad``, graph objects and grad modes."""
from funcgrad.autograd import forward_ad, profiler
from funcgrad.autograd.anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from funcgrad.autograd.api import backward, grad
from funcgrad.autograd.function import Function, FunctionCtx, once_differentiable
from funcgrad.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from funcgrad.autograd.graph import AccumulateGrad, Node, RemovableHandle

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "forward_ad",
           "profiler", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
            "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "Node", "AccumulateGrad", "RemovableHandle"]
