"""Layers against torch's with the same parameters (values and gradients), torch's initialisation
statistics, train/eval differences (Dropout, BatchNorm) and gradcheck through layers."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.func as ff
from funcgrad import nn
from funcgrad.check import gradcheck, gradgradcheck
from tests.nn.torch_compare import needs_torch, torch

rng = np.random.default_rng(3)

PAIRS = [
    (lambda m: m.Linear(4, 3), (5, 4)),
    (lambda m: m.Bilinear(2, 3, 4), ((5, 2), (5, 3))),
    (lambda m: m.Conv1d(2, 4, 3, stride=2, padding=1), (2, 2, 9)),
    (lambda m: m.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2), groups=2), (2, 4, 7, 7)),
    (lambda m: m.Conv2d(2, 3, 3, padding="same", bias=False), (1, 2, 5, 5)),
    (lambda m: m.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1), (2, 3, 4, 4)),
    (lambda m: m.MaxPool2d(3, 2, 1), (2, 3, 7, 7)),
    (lambda m: m.MaxPool1d(2), (2, 3, 8)),
    (lambda m: m.AvgPool2d(3, 2, 1, count_include_pad=False), (2, 3, 7, 7)),
    (lambda m: m.AvgPool1d(3), (2, 3, 9)),
    (lambda m: m.AdaptiveAvgPool2d((2, 3)), (2, 3, 7, 7)),
    (lambda m: m.LayerNorm([3, 4]), (2, 3, 4)),
    (lambda m: m.GroupNorm(2, 4), (3, 4, 5)),
    (lambda m: m.BatchNorm1d(3), (6, 3)),
    (lambda m: m.BatchNorm2d(3), (4, 3, 2, 2)),
    (lambda m: m.Flatten(), (2, 3, 4)),
    (lambda m: m.Unflatten(1, (2, 2)), (3, 4)),
    (lambda m: m.Sequential(m.LeakyReLU(0.2), m.ELU(), m.GELU(), m.SiLU(), m.Softplus(2.0), m.Tanh(), m.Sigmoid()),
     (3, 4)),
    (lambda m: m.Sequential(m.Softmax(1), m.LogSoftmax(0), m.ReLU(), m.Identity()), (3, 4)),
]


@needs_torch
@pytest.mark.parametrize("make,shapes", PAIRS)
def test_layer_matches_torch(make, shapes) -> None:
    theirs = make(torch.nn).double()
    ours = make(nn)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    shapes = shapes if isinstance(shapes[0], tuple) else (shapes,)
    xs = [rng.normal(size=s) for s in shapes]
    ins = [fg.tensor(x, requires_grad=True) for x in xs]
    tins = [torch.tensor(x, requires_grad=True) for x in xs]
    out, expected = ours(*ins), theirs(*tins)
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = rng.normal(size=out.shape)
    (out * w).sum().backward()
    (expected * torch.tensor(w)).sum().backward()
    for a, b in zip(ins, tins):
        np.testing.assert_allclose(a.grad.data, b.grad.numpy(), rtol=1e-9, atol=1e-12)
    named = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(named[name].grad.data, p.grad.numpy(), rtol=1e-9, atol=1e-12)
    for name, b in theirs.named_buffers():
        np.testing.assert_allclose(ours.state_dict()[name].data, b.numpy(), rtol=1e-10)


@pytest.mark.parametrize("make,fan_in", [(lambda: nn.Linear(50, 40), 50), (lambda: nn.Conv2d(6, 40, 5, groups=2), 75),
                                         (lambda: nn.ConvTranspose2d(40, 6, 3), 54)])
def test_initialisation_bounds_as_torch(make, fan_in: int) -> None:
    layer = make()
    bound = 1 / np.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert np.abs(layer.bias.data).max() <= bound
    assert bound >= np.abs(layer.weight.data).max() > 0.95 * bound
    assert abs(layer.weight.data.std() - bound / np.sqrt(3)) < 0.1 * bound


def test_init_functions() -> None:
    w = nn.Parameter(np.zeros((200, 300)))
    nn.init.xavier_uniform_(w, generator=fg.Generator(0))
    assert np.abs(w.data).max() <= np.sqrt(6 / 500)
    nn.init.kaiming_normal_(w, nonlinearity="relu", generator=fg.Generator(0))
    assert abs(w.data.std() - np.sqrt(2 / 300)) < 0.01
    nn.init.xavier_normal_(w)
    assert abs(w.data.std() - np.sqrt(2 / 500)) < 0.01
    nn.init.zeros_(w)
    assert not w.data.any()
    nn.init.constant_(w, 0.5)
    assert (w.data == 0.5).all()
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(np.sqrt(2 / 1.04))
    a = nn.init.normal_(nn.Parameter(np.zeros(5)), generator=fg.Generator(1))
    b = nn.init.normal_(nn.Parameter(np.zeros(5)), generator=fg.Generator(1))
    np.testing.assert_array_equal(a.data, b.data)


@pytest.mark.parametrize("fill", [nn.init.uniform_, nn.init.normal_, nn.init.trunc_normal_, nn.init.xavier_uniform_,
                                  nn.init.kaiming_normal_])
def test_random_initialisation_of_integers_raises(fill) -> None:
    """Random values written into an integer tensor were rounded silently; torch raises."""
    t = fg.tensor(np.zeros((3, 3), np.int64))
    with pytest.raises(NotImplementedError, match="not implemented for int64"):
        fill(t)
    assert not t.data.any() and t._version == 0
    np.testing.assert_array_equal(nn.init.constant_(t, 2).data, np.full((3, 3), 2))  # torch fills integers


def test_layers_without_weights_initialise_as_torch() -> None:
    """torch warns that a zero-element weight has nothing to fill; its fan_in 0 divided by zero here."""
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        layer = nn.Linear(0, 3)
    assert layer.weight.shape == (3, 0) and not layer.bias.data.any()
    np.testing.assert_array_equal(layer(fg.ones(2, 0)).data, np.zeros((2, 3)))


def test_train_eval_dropout() -> None:
    drop = nn.Dropout(0.5, generator=fg.Generator(0))
    x = fg.ones(100)
    assert (drop(x).data == 0).any()
    drop.eval()
    assert drop(x) is x


@needs_torch
def test_train_eval_batchnorm_matches_torch() -> None:
    bn, tbn = nn.BatchNorm2d(3, momentum=None), torch.nn.BatchNorm2d(3, momentum=None).double()
    for _ in range(3):
        data = rng.normal(size=(4, 3, 2, 2)) * 2 + 1
        np.testing.assert_allclose(bn(fg.tensor(data)).data, tbn(torch.tensor(data)).detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(bn.running_mean.data, tbn.running_mean.numpy(), rtol=1e-10)
    np.testing.assert_allclose(bn.running_var.data, tbn.running_var.numpy(), rtol=1e-10)
    assert bn.num_batches_tracked.item() == 3
    bn.eval()
    tbn.eval()
    data = rng.normal(size=(2, 3, 2, 2))
    np.testing.assert_allclose(bn(fg.tensor(data)).data, tbn(torch.tensor(data)).detach().numpy(), rtol=1e-10)
    assert bn.num_batches_tracked.item() == 3  # eval mode leaves the statistics alone


def test_batchnorm_updates_its_statistics_in_place_so_jit_and_state_dicts_see_them() -> None:
    """torch updates the running statistics in place: a state_dict taken earlier shares them. Replacing the
    arrays instead also let a jitted forward store its traced arrays in the module (unusable afterwards) and
    replay without counting the batches (num_batches_tracked 1 after 3 calls)."""
    bn, ref = nn.BatchNorm1d(3, momentum=None), nn.BatchNorm1d(3, momentum=None)
    state = bn.state_dict()
    jitted = ff.jit(lambda x: bn(fg.tensor(x)))
    with fg.no_grad():
        for _ in range(3):
            data = rng.normal(size=(4, 3))
            np.testing.assert_allclose(jitted(data).data, ref(fg.tensor(data)).data, rtol=1e-13)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(bn, name).data, getattr(ref, name).data, rtol=1e-13)
        assert state[name].data is getattr(bn, name).data
    assert bn.num_batches_tracked.item() == 3


@needs_torch
def test_normalization_with_the_wrong_channel_count_raises_torchs_error_and_keeps_its_statistics() -> None:
    """The in-place update must not start before the shapes are checked (mul_ then a failing add_ left the
    running mean scaled by 1 - momentum)."""
    bn, ref = nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3).double()
    data = rng.normal(size=(4, 3))
    bn(fg.tensor(data))
    ref(torch.tensor(data))
    for module, tensor in ((bn, fg.tensor), (ref, torch.tensor)):
        with pytest.raises(RuntimeError, match="running_mean should contain 5 elements not 3"):
            module(tensor(np.ones((4, 5))))
    for name in ("running_mean", "running_var", "num_batches_tracked"):  # torch counts the failed batch too
        np.testing.assert_allclose(getattr(bn, name).data, getattr(ref, name).numpy(), rtol=1e-13)
    with pytest.raises(RuntimeError, match=r"weight of shape \[4\] and input of shape \[4, 6, 2\]"):
        nn.GroupNorm(2, 4)(fg.ones(4, 6, 2))


def test_gradgradcheck_through_layers() -> None:
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.GELU(), nn.AvgPool2d(2), nn.Flatten(),
                          nn.LayerNorm(12), nn.Linear(12, 2))
    x = fg.tensor(rng.normal(size=(2, 2, 4, 4)), requires_grad=True)
    assert gradcheck(model, (x,)) and gradgradcheck(model, (x,))


def test_embedding_padding_row_gets_no_gradient() -> None:
    emb = nn.Embedding(5, 3, padding_idx=0)
    assert not emb.weight.data[0].any()
    emb(fg.tensor([[0, 1, 1]])).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.data[:2], [[0, 0, 0], [2, 2, 2]])
