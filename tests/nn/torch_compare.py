"""Helpers to run one computation in funcgrad and in torch (float64) and compare values and gradients.

torch is optional (CI runs without it): `torch` is the module or None, and `needs_torch` marks the tests
that compare with it, so the tests that use funcgrad alone still run."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg


def optional_torch() -> Any:
    """The torch module if it is installed, else None."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        return None


torch = optional_torch()
needs_torch = pytest.mark.skipif(torch is None, reason="compares with torch, which is not installed")


def compare(fg_fn: Callable[..., Any], torch_fn: Callable[..., Any], *arrays: np.ndarray, grads: bool = True,
            rtol: float = 1e-10, atol: float = 1e-12) -> None:
    """fg_fn(*tensors) equals torch_fn(*torch tensors), and so do the gradients of sum(out * w) for a random w."""
    fg_in = [fg.tensor(a, requires_grad=grads and a.dtype.kind == "f") for a in arrays]
    th_in = [torch.tensor(a, requires_grad=grads and a.dtype.kind == "f") for a in arrays]
    out, expected = fg_fn(*fg_in), torch_fn(*th_in)
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=rtol, atol=atol)
    if not grads:
        return
    w = np.random.default_rng(0).normal(size=out.shape)
    (out * w).sum().backward()
    (expected * torch.tensor(w)).sum().backward()
    for a, b in zip(fg_in, th_in):
        if b.requires_grad:
            assert a.grad is not None
            np.testing.assert_allclose(a.grad.data, b.grad.numpy(), rtol=rtol, atol=atol)
