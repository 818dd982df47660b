"""Reverse-mode automatic differentiation: ``backward``, ``grad``, graph objects and grad modes."""
from funcgrad.autograd import forward_ad
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
            "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "Node", "AccumulateGrad", "RemovableHandle"]
