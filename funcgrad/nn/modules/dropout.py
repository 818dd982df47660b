"""``Dropout`` and ``Dropout2d``: random zeroing in training mode, the identity in eval mode."""
from __future__ import annotations

from typing import Any

from funcgrad.creation import Generator
from funcgrad.nn import functional as F
from funcgrad.nn.modules.module import Module

__all__ = ["Dropout", "Dropout2d"]


class Dropout(Module):
    """Zero each element with probability ``p`` while training, scaling the rest by 1 / (1 - p).

    Args:
        p: the drop probability.
        inplace: write the result into the input (as torch).
        generator: a ``funcgrad.Generator`` for reproducible masks (default: funcgrad's default generator).
    """

    def __init__(self, p: float = 0.5, inplace: bool = False, generator: Generator | None = None) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace, self.generator = p, inplace, generator

    def forward(self, input: Any) -> Any:
        """dropout(input) in training mode, input in eval mode."""
        return F.dropout(input, self.p, self.training, self.inplace, self.generator)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout):
    """Zero whole channels with probability ``p`` while training, scaling the rest by 1 / (1 - p)."""

    def forward(self, input: Any) -> Any:
        """dropout2d(input) in training mode, input in eval mode."""
        return F.dropout2d(input, self.p, self.training, self.inplace, self.generator)
