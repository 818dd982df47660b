"""``Embedding``: a lookup table of vectors, initialised N(0, 1) as torch."""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.nn import functional as F
from funcgrad.nn import init
from funcgrad.nn.modules.module import Module
from funcgrad.nn.parameter import Parameter

__all__ = ["Embedding"]


class Embedding(Module):
    """Rows of ``weight`` (num_embeddings, embedding_dim) picked by integer indices; the row at
    ``padding_idx`` starts at zero and gets no gradient."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 dtype: Any = None, generator: Any = None) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.weight = Parameter(np.zeros((num_embeddings, embedding_dim), dtype or np.float64))
        init.normal_(self.weight, generator=generator)
        if padding_idx is not None:
            self.weight.data[padding_idx] = 0

    def forward(self, input: Any) -> Any:
        """The rows of ``weight`` at ``input``."""
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}" + (
            f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")
