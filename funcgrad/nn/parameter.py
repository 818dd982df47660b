"""``Parameter``: a leaf Tensor that a ``Module`` registers as one of its parameters."""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core.tensor import Tensor

__all__ = ["Parameter", "Buffer"]


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a ``Module`` attribute registers it.

    Args:
        data: the initial values (a Tensor's array is shared, not copied; anything else goes through
            ``np.asarray``); float64 zeros of shape (0,) when omitted.
        requires_grad: whether the parameter is trained (default True).

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad import nn
        >>> nn.Parameter(fg.zeros(2))
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
    """

    __slots__ = ()

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        array = np.zeros(0) if data is None else data.data if isinstance(data, Tensor) else np.asarray(data)
        super().__init__(array, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (Parameter, (self.data, self.requires_grad))

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) not in memo:
            memo[id(self)] = Parameter(self.data.copy(), self.requires_grad)
        return memo[id(self)]


class Buffer(Tensor):
    """A Tensor that assigning to a ``Module`` attribute registers as a buffer (``persistent`` as in
    ``register_buffer``)."""

    __slots__ = ("persistent",)

    def __init__(self, data: Any, persistent: bool = True) -> None:
        super().__init__(data.data if isinstance(data, Tensor) else np.asarray(data))
        self.persistent = persistent
