"""``functional_call``: run a module with some parameters and buffers replaced, as
``torch.func.functional_call``, so the function transforms can differentiate with respect to them.

Any object with ``funcgrad.nn.Module``'s registries (``named_modules`` and ``_parameters``/``_buffers``
dicts) will do; this layer sits below ``funcgrad.nn`` and does not import it."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from funcgrad.core.tensor import Tensor

__all__ = ["functional_call"]


def _stores(module: Any) -> dict[str, tuple[dict[str, Any], str]]:
    """Every parameter and buffer by dotted name (shared ones under each name), with its registry and key."""
    found = {}
    for prefix, sub in module.named_modules(remove_duplicate=False):
        lead = prefix + "." if prefix else ""
        for kind in ("_parameters", "_buffers"):
            registry = sub.__dict__[kind]
            for key, value in registry.items():
                if value is not None:
                    found[lead + key] = (registry, key)
    return found


@contextmanager
def _swapped(module: Any, values: Mapping[str, Any], tie_weights: bool, strict: bool) -> Any:
    stores = _stores(module)
    unexpected = [k for k in values if k not in stores]
    missing = [k for k in stores if k not in values]
    if strict and (unexpected or missing):
        parts = ([f"Unexpected key(s): {', '.join(map(repr, unexpected))}."] if unexpected else []) + \
                ([f"Missing key(s): {', '.join(map(repr, missing))}."] if missing else [])
        raise RuntimeError("Error(s) in reparametrizing for " + type(module).__name__ + ":\n\t" + "\n\t".join(parts))
    if unexpected:
        raise RuntimeError(f"functional_call got values for names the module does not have: {unexpected}")
    by_original: dict[int, Any] = {}
    for name, value in values.items():
        original = id(stores[name][0][stores[name][1]])
        if tie_weights and by_original.get(original, value) is not value:
            tied = sorted(k for k, (registry, key) in stores.items() if id(registry[key]) == original)
            raise ValueError(f"functional_call got multiple values for keys {tied}, which are tied. Consider using "
                             "tie_weights=False")
        by_original[original] = value
    saved = []
    try:
        for name, (registry, key) in stores.items():
            original = registry[key]
            if name in values:
                new = values[name]
            elif tie_weights and id(original) in by_original:
                new = by_original[id(original)]
            else:
                continue
            saved.append((registry, key, original))
            registry[key] = new if isinstance(new, Tensor) else Tensor(np.asarray(new))
        yield
    finally:
        for registry, key, original in reversed(saved):
            registry[key] = original


def functional_call(module: Any, parameter_and_buffer_dicts: Mapping[str, Any] | Sequence[Mapping[str, Any]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module(*args, **kwargs)`` with the named parameters and buffers replaced by the given values
    (Tensors or arrays) for this call only.

    Args:
        module: the module.
        parameter_and_buffer_dicts: a dict from dotted names (as ``named_parameters``) to values, or a sequence
            of such dicts (their keys must not overlap).
        args: the positional arguments (a single non-tuple value is one argument).
        kwargs: the keyword arguments.
        tie_weights: a parameter shared under several names takes the value given for any of them.
        strict: every parameter and buffer must be given, and nothing else.

    Example:
        >>> import numpy as np
        >>> import funcgrad as fg
        >>> from funcgrad import nn
        >>> from funcgrad.func import functional_call, grad
        >>> model = nn.Linear(3, 1)
        >>> params = {k: v.detach().numpy() for k, v in model.named_parameters()}
        >>> x = np.ones((2, 3))
        >>> grads = grad(lambda p: functional_call(model, p, (x,)).sum())(params)
        >>> grads["weight"]
        array([[2., 2., 2.]])
    """
    if isinstance(parameter_and_buffer_dicts, Mapping):
        values = dict(parameter_and_buffer_dicts)
    else:
        values = {}
        for d in parameter_and_buffer_dicts:
            clash = set(values) & set(d)
            if clash:
                raise ValueError(f"{sorted(clash)} appeared in multiple dictionaries; behavior of functional call "
                                 f"is ambiguous")
            values.update(d)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _swapped(module, values, tie_weights, strict):
        return module(*args, **(kwargs or {}))
