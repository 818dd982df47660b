"""Loss layers against torch's (values and input gradients, float64), their buffers and their repr."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import nn
from tests.nn.torch_compare import needs_torch, torch

rng = np.random.default_rng(5)
_LOGITS = rng.normal(size=(4, 3))
_CLASSES = np.array([0, 2, 1, -100])
_PROBS = rng.uniform(0.05, 0.95, (4, 3))
_WEIGHT = np.array([1.0, 2.0, 0.5])

CASES = [  # (make the loss from a module namespace and a tensor constructor, input, target)
    (lambda m, t: m.L1Loss(), _LOGITS, _PROBS),
    (lambda m, t: m.MSELoss(reduction="sum"), _LOGITS, _PROBS),
    (lambda m, t: m.SmoothL1Loss(beta=0.5), _LOGITS, _PROBS),
    (lambda m, t: m.HuberLoss(reduction="none", delta=0.7), _LOGITS, _PROBS),
    (lambda m, t: m.NLLLoss(t(_WEIGHT)), _LOGITS, _CLASSES),
    (lambda m, t: m.CrossEntropyLoss(), _LOGITS, _CLASSES),
    (lambda m, t: m.CrossEntropyLoss(t(_WEIGHT), reduction="sum"), _LOGITS, _CLASSES),
    (lambda m, t: m.CrossEntropyLoss(label_smoothing=0.1, ignore_index=1), _LOGITS, np.array([0, 2, 1, 1])),
    (lambda m, t: m.CrossEntropyLoss(t(_WEIGHT)), _LOGITS, _PROBS / _PROBS.sum(1, keepdims=True)),
    (lambda m, t: m.BCELoss(t(_PROBS)), _PROBS, _PROBS[::-1].copy()),
    (lambda m, t: m.BCEWithLogitsLoss(pos_weight=t(_WEIGHT)), _LOGITS, _PROBS),
    (lambda m, t: m.KLDivLoss(reduction="batchmean", log_target=True), _LOGITS, _LOGITS[::-1].copy()),
]


@needs_torch
@pytest.mark.parametrize("make,x,target", CASES)
def test_loss_modules_match_torch(make: Any, x: np.ndarray, target: np.ndarray) -> None:
    xf, xt = fg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = make(nn, fg.tensor)(xf, fg.tensor(target)), make(torch.nn, torch.tensor)(xt, torch.tensor(target))
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-12)
    w = rng.normal(size=out.shape)
    (out * w).sum().backward()
    (expected * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xf.grad.data, xt.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_cross_entropy_loss_is_the_fused_op_and_keeps_its_weight_as_a_buffer() -> None:
    loss = nn.CrossEntropyLoss(np.array([1.0, 2.0, 0.5]), reduction="sum")
    assert list(loss.state_dict()) == ["weight"] and not list(loss.parameters())
    assert repr(loss) == "CrossEntropyLoss(reduction=sum)"
    out = loss(fg.tensor(_LOGITS, requires_grad=True), fg.tensor(_CLASSES))
    assert out.grad_fn.name() == "CrossEntropyBackward0"
    unweighted = nn.CrossEntropyLoss(reduction="sum")(fg.tensor(_LOGITS), fg.tensor(_CLASSES))
    assert out.item() != pytest.approx(unweighted.item())  # the weight is used
