"""The core: ``Tensor``, the backward graph, the engine and the per-thread mode state.

This package imports NumPy and itself only (``tests/test_layers.py`` checks it). The op layer
(``funcgrad.ops``) builds on it: it installs the Tensor methods and registers what the engine needs
to know about gradients (``engine.register_gradient_space``). ``tensor`` is imported first: the graph,
the engine and ``backward`` refer to the Tensor class through its module (Tensor and Node refer to
each other, as PyTorch's Variable and Node do).
"""
from funcgrad.core import tensor  # noqa: I001  (first: see above)
from funcgrad.core import backward, dispatch, engine, grad_mode, graph, structured, tangents, views
from funcgrad.core.tensor import Tensor

__all__ = ["Tensor", "backward", "dispatch", "engine", "grad_mode", "graph", "structured", "tangents", "tensor",
           "views"]
