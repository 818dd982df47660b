"""The activations and distances of nn.functional added for torch code (hardtanh, relu6, selu, celu, mish, glu,
normalize, cosine_similarity, pairwise_distance, ...) and their layers: values and gradients against torch (at the
kinks too), gradcheck/gradgradcheck and forward mode in float64, torch's errors, and properties."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
from funcgrad import nn
from funcgrad.check import gradcheck, gradgradcheck
from funcgrad.nn import functional as F
from tests.budget import examples
from tests.nn.torch_compare import compare, needs_torch, torch

rng = np.random.default_rng(7)
KINKS = np.array([-6.0, -3.0, -2.5, -1.0, -0.3, 0.0, 0.4, 1.0, 2.0, 3.0, 6.0, 7.5])  # every activation's kinks
X, Y = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))

# name -> call written once for funcgrad's and torch's nn.functional (module F), with its inputs
CALLS: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "hardtanh": (lambda F, x: F.hardtanh(x), (KINKS,)),
    "hardtanh_bounds": (lambda F, x: F.hardtanh(x, -2.5, 2.0), (KINKS,)),
    "relu6": (lambda F, x: F.relu6(x), (KINKS,)),
    "hardsigmoid": (lambda F, x: F.hardsigmoid(x), (KINKS,)),
    "hardswish": (lambda F, x: F.hardswish(x), (KINKS,)),
    "selu": (lambda F, x: F.selu(x), (KINKS,)),
    "celu": (lambda F, x: F.celu(x, 2.0), (KINKS,)),
    "mish": (lambda F, x: F.mish(x), (KINKS,)),
    "logsigmoid": (lambda F, x: F.logsigmoid(x * 100), (KINKS,)),
    "softsign": (lambda F, x: F.softsign(x), (KINKS,)),
    "tanhshrink": (lambda F, x: F.tanhshrink(x), (KINKS,)),
    "glu": (lambda F, x: F.glu(x), (X,)),
    "glu_dim0": (lambda F, x: F.glu(x[:2], 0), (X,)),
    "normalize": (lambda F, x: F.normalize(x), (X,)),
    "normalize_p1_dim0_zero_row": (lambda F, x: F.normalize(x * (x > 0), 1.0, 0), (X,)),
    "cosine_similarity": (lambda F, x, y: F.cosine_similarity(x, y), (X, Y)),
    "cosine_similarity_broadcast_tiny": (lambda F, x, y: F.cosine_similarity(x * 1e-10, y[:1], 1), (X, Y)),
    "pairwise_distance": (lambda F, x, y: F.pairwise_distance(x, y), (X, Y)),
    "pairwise_distance_p1_keepdim": (lambda F, x, y: F.pairwise_distance(x, y[0], 1.0, keepdim=True), (X, Y)),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_and_gradients_are_torchs_at_the_kinks_too(name: str) -> None:
    call, arrays = CALLS[name]
    # (rtol: torch's hard* backward kernels use 1/6 rounded to float32)
    compare(lambda *a: call(F, *a), lambda *a: call(torch.nn.functional, *a), *arrays, rtol=1e-7)


# name -> (function, inputs): each differentiable at its inputs (away from the kinks)
CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 0.5), (np.array([-0.7, -0.2, 0.3, 0.8]),)),
    "relu6": (F.relu6, (np.array([-1.0, 0.5, 5.5, 6.5]),)),
    "hardsigmoid": (F.hardsigmoid, (np.array([-4.0, -2.0, 1.0, 4.0]),)),
    "hardswish": (F.hardswish, (np.array([-4.0, -2.0, 1.0, 4.0]),)),
    "selu": (F.selu, (KINKS[KINKS != 0],)),
    "celu": (lambda x: F.celu(x, 0.5), (KINKS[KINKS != 0],)),
    "mish": (F.mish, (KINKS,)),
    "logsigmoid": (F.logsigmoid, (KINKS,)),
    "softsign": (F.softsign, (KINKS[KINKS != 0],)),
    "tanhshrink": (F.tanhshrink, (KINKS,)),
    "glu": (lambda x: F.glu(x, 1), (X,)),
    "normalize": (lambda x: F.normalize(x, 3.0, 0), (X,)),
    "cosine_similarity": (F.cosine_similarity, (X, Y)),
    "pairwise_distance": (lambda x, y: F.pairwise_distance(x, y, 3.0), (X, Y)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_first_and_second_derivatives_reverse_and_forward(name: str) -> None:
    fn, arrays = CASES[name]
    inputs = tuple(fg.tensor(a, requires_grad=True) for a in arrays)
    assert gradcheck(fn, inputs, check_forward_ad=True)
    assert gradgradcheck(fn, inputs)


def test_kinks_and_in_place_forms() -> None:
    x = fg.tensor([-1.0, 0.0, 0.5, 1.0, 6.0], requires_grad=True)
    (g,) = fg.autograd.grad(F.hardtanh(x).sum() + F.relu6(x).sum(), x)
    assert g.tolist() == [0.0, 1.0, 2.0, 1.0, 0.0]  # slope 0 at hardtanh's bounds and relu6's 0 and 6, as torch
    y = fg.tensor([-2.0, 0.5, 3.0])
    assert F.hardtanh_(y) is y and y.tolist() == [-1.0, 0.5, 1.0] and y._version == 1
    assert F.relu6(fg.tensor([7.0]), inplace=True).tolist() == [6.0]


def test_errors_are_torchs() -> None:
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(fg.ones(2), 1.0, -1.0)
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(fg.ones(2), 0.0)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 0 is size 3"):
        F.glu(fg.ones(3))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(fg.ones(()))


def test_layers_apply_their_function_and_show_torchs_repr() -> None:
    x = fg.tensor(KINKS)
    layers = {nn.Hardtanh(-2.0, 2.0): F.hardtanh(x, -2.0, 2.0), nn.ReLU6(): F.relu6(x), nn.Mish(): F.mish(x),
              nn.SELU(): F.selu(x), nn.CELU(2.0): F.celu(x, 2.0), nn.Hardsigmoid(): F.hardsigmoid(x),
              nn.Hardswish(): F.hardswish(x), nn.LogSigmoid(): F.logsigmoid(x), nn.Softsign(): F.softsign(x),
              nn.Tanhshrink(): F.tanhshrink(x), nn.GLU(0): F.glu(x, 0)}
    for layer, expected in layers.items():
        np.testing.assert_array_equal(layer(x).data, expected.data)
    a, b = fg.tensor(X), fg.tensor(Y)
    np.testing.assert_array_equal(nn.CosineSimilarity(0)(a, b).data, F.cosine_similarity(a, b, 0).data)
    np.testing.assert_array_equal(nn.PairwiseDistance(1.0)(a, b).data, F.pairwise_distance(a, b, 1.0).data)
    assert repr(nn.Hardtanh(-2, 2, True)) == "Hardtanh(min_val=-2, max_val=2, inplace=True)"
    assert repr(nn.ReLU6(inplace=True)) == "ReLU6(inplace=True)" and repr(nn.CELU(2.0)) == "CELU(alpha=2.0)"
    assert repr(nn.GLU()) == "GLU(dim=-1)" and repr(nn.Softsign()) == "Softsign()"
    x = fg.tensor([-1.0, 2.0])
    assert nn.SELU(inplace=True)(x) is x


_rows = hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 5)), elements=st.floats(-1e3, 1e3))


@settings(max_examples=examples(30), deadline=None)
@given(a=_rows)
def test_normalize_gives_unit_norms_or_zeros(a: np.ndarray) -> None:
    norms = np.linalg.norm(F.normalize(fg.tensor(a)).data, axis=1)
    expected = np.where(np.linalg.norm(a, axis=1) > 1e-12, 1.0, norms)
    np.testing.assert_allclose(norms, expected, rtol=1e-12)


@settings(max_examples=examples(30), deadline=None)
@given(a=_rows, seed=st.integers(0, 2**16))
def test_cosine_similarity_is_symmetric_in_minus_one_to_one_and_one_with_itself(a: np.ndarray, seed: int) -> None:
    b = np.random.default_rng(seed).normal(size=a.shape)
    cos = F.cosine_similarity(fg.tensor(a), fg.tensor(b)).data
    assert np.all(np.abs(cos) <= 1 + 1e-12)
    np.testing.assert_allclose(cos, F.cosine_similarity(fg.tensor(b), fg.tensor(a)).data, rtol=1e-12, atol=1e-15)
    self_cos = F.cosine_similarity(fg.tensor(b), fg.tensor(b)).data
    np.testing.assert_allclose(self_cos, 1.0, rtol=1e-12)
