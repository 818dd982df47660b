"""In-place operations on views: rewriting the history of the base (completed in issue 3)."""
from __future__ import annotations

from typing import Any


def inplace_on_view(view: Any, fn: Any, args: Any, kwargs: Any) -> Any:
    """Apply an in-place op to a view of a tensor whose history is recorded."""
    raise NotImplementedError("in-place operations on views of tensors that require grad are not "
                              "supported yet; apply the operation to a clone() instead")
