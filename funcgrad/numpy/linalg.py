"""``funcgrad.numpy.linalg``: NumPy's ``linalg`` (its functions take Tensors through NumPy's protocols)."""
from typing import Any

import numpy


def __getattr__(name: str) -> Any:
    """NumPy's ``linalg`` names."""
    return getattr(numpy.linalg, name)
