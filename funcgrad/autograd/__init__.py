"""Reverse-mode automatic differentiation: ``backward``, ``grad``, graph objects and grad modes."""
from funcgrad.autograd.api import backward, grad
from funcgrad.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from funcgrad.autograd.graph import AccumulateGrad, Node, RemovableHandle

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "Node", "AccumulateGrad", "RemovableHandle"]
