"""Reverse-mode automatic differentiation: ``backward``, ``grad``, graph objects and grad modes.

The graph, the engine and the mode state live in ``funcgrad.core``; their old paths here
(``funcgrad.autograd.graph``, ``.grad_mode``, ``.dispatch``, ``.engine``, ``.structured``) name the same
modules (see ``funcgrad/__init__.py``), so ``from funcgrad.autograd.graph import saved_tensors_hooks``
keeps working.
"""
from funcgrad.autograd import forward_ad, profiler
from funcgrad.autograd.anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from funcgrad.autograd.function import Function, FunctionCtx, once_differentiable
from funcgrad.core import dispatch as dispatch  # the old paths funcgrad.autograd.<module>
from funcgrad.core import engine as engine
from funcgrad.core import grad_mode as grad_mode
from funcgrad.core import graph as graph
from funcgrad.core import structured as structured
from funcgrad.core.backward import backward, grad
from funcgrad.core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from funcgrad.core.graph import AccumulateGrad, Node, RemovableHandle

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "forward_ad",
           "profiler", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
            "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "Node", "AccumulateGrad", "RemovableHandle"]
