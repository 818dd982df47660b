"""Optimizers step by step against torch.optim (same start, same gradients, several steps), their state_dict,
param groups and errors; learning-rate schedules against torch's."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad import optim
from tests.budget import examples
from tests.nn.torch_compare import needs_torch, torch

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.95), "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "maximize": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.3, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.5}),
]


def _loss(w, b, x):
    return ((x @ w + b).tanh() ** 2).sum()


@needs_torch
@pytest.mark.parametrize("name,kwargs", CASES)
def test_steps_match_torch(name: str, kwargs: dict) -> None:
    rng = np.random.default_rng(0)
    w0, b0, xs = rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(6, 4, 3))
    ours = [fg.tensor(w0, requires_grad=True), fg.tensor(b0, requires_grad=True)]
    theirs = [torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)]
    opt, ref = getattr(optim, name)(ours, **kwargs), getattr(torch.optim, name)(theirs, **kwargs)
    for x in xs:
        opt.zero_grad()
        ref.zero_grad()
        _loss(*ours, fg.tensor(x)).backward()
        _loss(*theirs, torch.tensor(x)).backward()
        opt.step()
        ref.step()
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-10, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("name,kwargs", CASES)
def test_complex_parameters_step_as_torch(name: str, kwargs: dict) -> None:
    """torch updates a complex parameter as its real and imaginary parts (view_as_real): Adam's second moment is
    |Re g|^2 and |Im g|^2, not the complex g^2 (which gave a wrong trajectory)."""
    rng = np.random.default_rng(1)
    z0 = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
    targets = rng.normal(size=(4, 2, 3)) + 1j * rng.normal(size=(4, 2, 3))
    ours, theirs = fg.tensor(z0, requires_grad=True), torch.tensor(z0, requires_grad=True)
    opt, ref = getattr(optim, name)([ours], **kwargs), getattr(torch.optim, name)([theirs], **kwargs)
    for target in targets:
        opt.zero_grad()
        ref.zero_grad()
        d, e = ours - fg.tensor(target), theirs - torch.tensor(target)
        ((d * d.conj()).real.sum() + (d.real ** 3).sum()).backward()
        ((e * e.conj()).real.sum() + (e.real ** 3).sum()).backward()
        opt.step()
        ref.step()
        np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_sgd_by_hand_and_version_bump() -> None:
    w = fg.tensor([1.0, -2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.5, momentum=0.5)
    for expected in ([0.0, 0.0], [-0.5, 1.0]):  # grad 2w: b = 2w0; then b = 0.5 b + 2 w1
        opt.zero_grad()
        (w * w).sum().backward()
        version = w._version
        opt.step()
        assert w._version > version
        np.testing.assert_allclose(w.data, expected)


def test_param_groups_state_dict_and_zero_grad() -> None:
    a, b = fg.ones(2, requires_grad=True), fg.ones(3, requires_grad=True)
    opt = optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    c = fg.ones(1, requires_grad=True)
    opt.add_param_group({"params": c, "betas": (0.5, 0.5)})
    assert opt.param_groups[2]["betas"] == (0.5, 0.5) and opt.param_groups[2]["lr"] == 0.1
    (a.sum() + b.sum() * 2 + c.sum()).backward()
    opt.step()
    state = opt.state_dict()
    assert state["param_groups"][1]["params"] == [1] and state["state"][0]["step"] == 1
    other_params = [fg.ones(2, requires_grad=True), fg.ones(3, requires_grad=True), fg.ones(1, requires_grad=True)]
    other = optim.Adam([{"params": other_params[:1]}, {"params": other_params[1:2]}, {"params": other_params[2:]}])
    other.load_state_dict(state)
    assert other.param_groups[1]["lr"] == 0.5
    np.testing.assert_array_equal(other.state[other_params[1]]["exp_avg"], opt.state[b]["exp_avg"])
    grad = a.grad
    opt.zero_grad(set_to_none=False)
    assert a.grad is grad and not a.grad.data.any()  # zeroed in place
    opt.zero_grad()
    assert a.grad is None
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([a], lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD([a], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="ordering of tensors in sets will change between runs"):
        optim.SGD([{"params": {a, b}}], lr=0.1)  # as torch: a state_dict saves the state by position


@needs_torch
@pytest.mark.parametrize("name,kwargs", [("StepLR", {"step_size": 3, "gamma": 0.5}), ("ExponentialLR", {"gamma": 0.9}),
                                         ("CosineAnnealingLR", {"T_max": 5, "eta_min": 0.01}),
                                         ("LambdaLR", {"lr_lambda": lambda e: 1 / (e + 1)})])
def test_schedulers_match_torch(name: str, kwargs: dict) -> None:
    ours = getattr(optim.lr_scheduler, name)(optim.SGD([fg.ones(1, requires_grad=True)], lr=0.1), **kwargs)
    theirs = getattr(torch.optim.lr_scheduler, name)(torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1),
                                                     **kwargs)
    for _ in range(8):
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)
        ours.optimizer.step()
        theirs.optimizer.step()
        ours.step()
        theirs.step()


@needs_torch
def test_reduce_lr_on_plateau_matches_torch() -> None:
    ours = optim.lr_scheduler.ReduceLROnPlateau(optim.SGD([fg.ones(1, requires_grad=True)], lr=1.0), patience=1,
                                                factor=0.5, cooldown=1, min_lr=0.1)
    theirs = torch.optim.lr_scheduler.ReduceLROnPlateau(torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=1.0),
                                                        patience=1, factor=0.5, cooldown=1, min_lr=0.1)
    for metric in [5, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3]:
        ours.step(metric)
        theirs.step(metric)
        assert ours.optimizer.param_groups[0]["lr"] == pytest.approx(theirs.optimizer.param_groups[0]["lr"])


@needs_torch
def test_schedulers_chain_and_keep_a_rate_set_by_hand_as_torch() -> None:
    """torch's step, exponential and cosine schedules scale the current rate: two on one optimizer compose, and
    a rate set by hand carries on (closed forms of the epoch overwrote both, silently)."""
    sched = optim.lr_scheduler
    ours = optim.SGD([{"params": [fg.ones(1, requires_grad=True)]}, {"params": [fg.ones(1, requires_grad=True)],
                                                                     "lr": 0.3}], lr=0.1)
    theirs = torch.optim.SGD([{"params": [torch.ones(1, requires_grad=True)]},
                              {"params": [torch.ones(1, requires_grad=True)], "lr": 0.3}], lr=0.1)
    kinds = [("StepLR", {"step_size": 3, "gamma": 0.5}), ("ExponentialLR", {"gamma": 0.9}),
             ("CosineAnnealingLR", {"T_max": 4, "eta_min": 0.01})]
    mine = [getattr(sched, name)(ours, **kwargs) for name, kwargs in kinds]
    ref = [getattr(torch.optim.lr_scheduler, name)(theirs, **kwargs) for name, kwargs in kinds]
    for epoch in range(14):
        if epoch == 5:
            for opt in (ours, theirs):
                opt.param_groups[1]["lr"] = 0.02
        ours.step()
        theirs.step()
        for a, b in zip(mine, ref):
            a.step()
            b.step()
        assert [g["lr"] for g in ours.param_groups] == pytest.approx([g["lr"] for g in theirs.param_groups],
                                                                      rel=1e-12)
        assert mine[-1].get_last_lr() == pytest.approx(ref[-1].get_last_lr(), rel=1e-12)


def _options(name: str, draw: Any) -> dict[str, Any]:
    """Options of optimizer ``name`` drawn as torch accepts them."""
    lr = draw(st.sampled_from([0.3, 0.05, 0.001]))
    decay = draw(st.sampled_from([0.0, 0.1]))
    maximize = draw(st.booleans())
    if name == "SGD":
        momentum = draw(st.sampled_from([0.0, 0.5, 0.9]))
        nesterov = momentum > 0 and draw(st.booleans())
        dampening = 0.0 if nesterov else draw(st.sampled_from([0.0, 0.3]))
        return {"lr": lr, "momentum": momentum, "dampening": dampening, "nesterov": nesterov, "weight_decay": decay,
                "maximize": maximize}
    if name in ("Adam", "AdamW"):
        return {"lr": lr, "betas": draw(st.sampled_from([(0.9, 0.999), (0.5, 0.8)])), "amsgrad": draw(st.booleans()),
                "weight_decay": decay, "eps": draw(st.sampled_from([1e-8, 0.1])), "maximize": maximize}
    if name == "RMSprop":
        return {"lr": lr, "alpha": draw(st.sampled_from([0.99, 0.5])), "momentum": draw(st.sampled_from([0.0, 0.7])),
                "centered": draw(st.booleans()), "weight_decay": decay, "maximize": maximize}
    return {"lr": lr, "lr_decay": draw(st.sampled_from([0.0, 0.05])), "weight_decay": decay, "maximize": maximize,
            "initial_accumulator_value": draw(st.sampled_from([0.0, 0.3]))}


@needs_torch
@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), name=st.sampled_from(["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]),
       shape=st.sampled_from([(), (3,), (2, 3)]), complex_param=st.booleans())
def test_any_options_step_as_torch(data: st.DataObject, name: str, shape: tuple, complex_param: bool) -> None:
    """Every optimizer with options drawn at random, on real or complex parameters, three steps next to torch's."""
    kwargs = _options(name, data.draw)
    rng = np.random.default_rng(len(shape))
    start = rng.normal(size=shape) + (1j * rng.normal(size=shape) if complex_param else 0)
    ours, theirs = fg.tensor(start, requires_grad=True), torch.tensor(start, requires_grad=True)
    opt, ref = getattr(optim, name)([ours], **kwargs), getattr(torch.optim, name)([theirs], **kwargs)
    for step in range(3):
        for p, o in ((ours, opt), (theirs, ref)):
            o.zero_grad()
            d = p - (step + 1.0)
            ((d * d.conj()).real * 0.5 + (d.real * 0.3).cos()).sum().backward()
            o.step()
        np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
