"""nn.Module: registration, traversal, state_dict, modes, dtype, repr and hooks (orders, replacements,
removal, grad_input/grad_output as torch reports them)."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import nn
from tests.nn.torch_compare import needs_torch, torch


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(4, 2)
        self.scale = nn.Parameter(fg.ones(2))
        self.register_buffer("count", fg.zeros(1))
        self.register_buffer("scratch", fg.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


def test_registration_and_traversal() -> None:
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in net.named_buffers()] == ["count", "scratch"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert net.get_submodule("fc1") is net.fc1 and net.get_parameter("fc2.bias") is net.fc2.bias
    net.fc2 = nn.Linear(4, 2, bias=False)
    assert net.fc2.bias is None and "fc2.bias" not in dict(net.named_parameters())
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        _ = net.nope
    with pytest.raises(TypeError, match="cannot assign 'int' as parameter 'scale'"):
        net.scale = 3
    del net.act
    assert "act" not in dict(net.named_children())


def test_a_replaced_layer_keeps_its_place() -> None:
    """torch re-registers a name where it was: setattr(seq, "1", layer) used to move the layer to the end of a
    Sequential, which then ran its layers in another order (a silently different model when the shapes fit)."""
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2), nn.Sigmoid())
    setattr(seq, "1", nn.Tanh())
    seq[-1] = nn.Identity()
    assert [type(m).__name__ for m in seq] == ["Linear", "Tanh", "Linear", "Identity"]
    x = fg.randn(3, 2, seed=1)
    np.testing.assert_allclose(seq(x).data, seq[2](seq[0](x).tanh()).data)
    del seq[0]
    assert list(seq._modules) == ["0", "1", "2"] and isinstance(seq[0], nn.Tanh)
    layers = nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.Sigmoid()])
    del layers[:2]
    layers.append(nn.ReLU())
    assert [type(m).__name__ for m in layers] == ["Sigmoid", "ReLU"]
    layer = nn.Linear(2, 2)
    layer.weight = nn.Parameter(fg.zeros(2, 2))
    layer.register_buffer("stat", fg.zeros(1))
    layer.register_buffer("other", fg.zeros(1))
    layer.stat = nn.Buffer(fg.ones(1))
    assert list(layer.state_dict()) == ["weight", "bias", "stat", "other"]  # as torch's


def test_shared_parameters_are_listed_once() -> None:
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]  # as torch


def test_state_dict_round_trip_and_strict_errors() -> None:
    a, b = Net(), Net()
    state = a.state_dict()
    assert list(state) == ["scale", "count", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    result = b.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    x = fg.randn(5, 3, seed=0)
    np.testing.assert_array_equal(a(x).data, b(x).data)
    assert b.load_state_dict({k: v.numpy() for k, v in state.items()}).missing_keys == []  # arrays accepted
    bad = dict(state)
    del bad["fc1.bias"]
    bad["extra"] = fg.zeros(1)
    bad["fc2.weight"] = fg.zeros(3, 3)
    before = b.fc2.weight.data.copy()
    with pytest.raises(RuntimeError) as error:
        b.load_state_dict(bad)
    assert str(error.value) == (
        'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc1.bias". \n\t'
        'Unexpected key(s) in state_dict: "extra". \n\tsize mismatch for fc2.weight: copying a param with shape '
        '(3, 3) from checkpoint, the shape in current model is (2, 4).')
    np.testing.assert_array_equal(b.fc2.weight.data, before)  # unchanged after the error
    del bad["fc2.weight"]
    assert b.load_state_dict(bad, strict=False) == (["fc1.bias", "fc2.weight"], ["extra"])


def test_modes_grads_dtype_apply_and_deepcopy() -> None:
    net = Net()
    assert net.training and not net.eval().fc1.training and net.train().fc2.training
    net(fg.ones(1, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    grad = net.fc1.weight.grad
    net.zero_grad(set_to_none=False)
    assert net.fc1.weight.grad is grad and not grad.data.any()  # zeroed in place
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.float()
    assert net.fc1.weight.dtype == np.float32 and net.count.dtype == np.float32
    assert net.double().fc1.weight.dtype == np.float64
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "Tanh", "Linear", "Net"]
    clone = copy.deepcopy(net)
    assert clone.fc1.weight is not net.fc1.weight
    np.testing.assert_array_equal(clone.fc1.weight.data, net.fc1.weight.data)


@needs_torch
def test_repr_like_torch() -> None:
    model = nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2),
                          nn.ModuleDict({"head": nn.Linear(800, 10)}), nn.Dropout(0.25))
    assert repr(model) == repr(torch.nn.Sequential(
        torch.nn.Conv2d(1, 20, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.ModuleDict({"head": torch.nn.Linear(800, 10)}), torch.nn.Dropout(0.25)))
    for mine, theirs in [(nn.Conv2d(2, 4, 3, padding="same", dilation=2, bias=False),
                          torch.nn.Conv2d(2, 4, 3, padding="same", dilation=2, bias=False)),
                         (nn.ConvTranspose2d(2, 3, 3, 2, 1, 1), torch.nn.ConvTranspose2d(2, 3, 3, 2, 1, 1)),
                         (nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)), (nn.GELU(), torch.nn.GELU()),
                         (nn.Embedding(3, 4), torch.nn.Embedding(3, 4)), (nn.Flatten(), torch.nn.Flatten())]:
        assert repr(mine).replace("bias=True, ", "") == repr(theirs).replace("bias=True, ", "")


# ----- forward hooks ----------------------------------------------------------------------------------
def test_forward_hooks_order_replacement_kwargs_and_removal() -> None:
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: calls.append("pre1"))
    lin.register_forward_pre_hook(lambda m, args: calls.append("pre0"), prepend=True)
    h3 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))  # replaces the input
    h4 = lin.register_forward_hook(lambda m, args, out: calls.append(("post", args[0].shape)))
    h5 = lin.register_forward_hook(lambda m, args, out: out + 100)  # replaces the output
    x = fg.ones(1, 2)
    out = lin(x)
    assert calls == ["pre0", "pre1", ("post", (1, 2))]
    np.testing.assert_allclose(out.data, lin.bias.data[None] + 100)
    for h in (h1, h3, h4, h5):
        h.remove()
    calls.clear()
    np.testing.assert_allclose(lin(x).data, (x @ lin.weight.T + lin.bias).data)
    assert calls == ["pre0"]

    class Scaled(nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    m = Scaled()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": kwargs["scale"] * 10}), with_kwargs=True)
    seen = []
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(kwargs), with_kwargs=True)
    np.testing.assert_allclose(m(fg.ones(2), scale=2.0).data, [20.0, 20.0])
    assert seen == [{"scale": 20.0}]
    m.register_forward_pre_hook(lambda mod, args, kwargs: 3, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of \(new_args, new_kwargs\)"):
        m(fg.ones(2), scale=1.0)


# ----- backward hooks: grad_input / grad_output as torch reports them -----------------------------------
def _record(module, record, prefix):
    module.register_full_backward_pre_hook(lambda m, go: record.append((prefix + "pre", _arrays(go))))
    module.register_full_backward_hook(lambda m, gi, go: record.append((prefix + "post", _arrays(gi), _arrays(go))))


def _arrays(grads):
    return tuple(None if g is None else np.asarray(g.detach() if hasattr(g, "detach") else g) for g in grads)


@needs_torch
@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("input_grad", [True, False])
def test_full_backward_hooks_match_torch(kind: str, input_grad: bool) -> None:
    rng = np.random.default_rng(0)
    if kind == "linear":
        ours, theirs, x = nn.Linear(3, 2), torch.nn.Linear(3, 2).double(), rng.normal(size=(4, 3))
    else:
        ours, theirs, x = nn.Conv2d(2, 3, 3, padding=1), torch.nn.Conv2d(2, 3, 3, padding=1).double(), \
            rng.normal(size=(2, 2, 5, 5))
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    mine, ref = [], []
    _record(ours, mine, "")
    _record(theirs, ref, "")
    w = rng.normal(size=(4, 2) if kind == "linear" else (2, 3, 5, 5))
    (ours(fg.tensor(x, requires_grad=input_grad)) * w).sum().backward()
    (theirs(torch.tensor(x, requires_grad=input_grad)) * torch.tensor(w)).sum().backward()
    assert [r[0] for r in mine] == [r[0] for r in ref] == ["pre", "post"]
    for got, expected in zip(mine, ref):
        for a, b in zip(got[1:], expected[1:]):
            assert len(a) == len(b)
            for ga, gb in zip(a, b):
                assert (ga is None) == (gb is None)
                if ga is not None:
                    np.testing.assert_allclose(ga, gb, rtol=1e-10)


def test_backward_hook_replaces_grad_input_and_pre_hook_grad_output() -> None:
    lin = nn.Linear(2, 2)
    lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 2,))
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 0 + 7,))
    x = fg.ones(1, 2, requires_grad=True)
    lin(x).sum().backward()
    np.testing.assert_allclose(x.grad.data, [[7.0, 7.0]])
    np.testing.assert_allclose(lin.bias.grad.data, [2.0, 2.0])  # parameters see the replaced grad_output


def test_full_backward_hook_removal_and_old_hook_exclusion() -> None:
    lin = nn.Linear(2, 2)
    calls = []
    handle = lin.register_full_backward_hook(lambda m, gi, go: calls.append(1))
    lin(fg.ones(1, 2, requires_grad=True)).sum().backward()
    handle.remove()
    lin(fg.ones(1, 2, requires_grad=True)).sum().backward()
    assert calls == [1]
    lin.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        lin.register_backward_hook(lambda m, gi, go: None)


def test_old_backward_hook_sees_the_last_nodes_gradients() -> None:
    lin = nn.Linear(3, 2)
    seen = []
    lin.register_backward_hook(lambda m, gi, go: seen.append(([g.shape for g in gi if g is not None],
                                                              [g.shape for g in go])))
    lin(fg.ones(4, 3, requires_grad=True)).sum().backward()
    assert seen and seen[0][1] == [(4, 2)]


@needs_torch
def test_full_backward_hooks_with_mixed_inputs_and_outputs_match_torch() -> None:
    """A non-tensor argument gets None, a tensor that needs no gradient zeros, an unused output None."""
    reports = []
    for lib, module_class in ((fg, nn.Module), (torch, torch.nn.Module)):
        class Mixed(module_class):
            def forward(self, a, k, b):
                return a * k + b.sum(), a * b

        module, record = Mixed(), []
        module.register_full_backward_pre_hook(lambda m, go, record=record: record.append(_arrays(go)))
        module.register_full_backward_hook(lambda m, gi, go, record=record: record.append(_arrays(gi)))
        a = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
        first, _ = module(a, 2.0, lib.tensor(np.array([3.0, 4.0])))
        first.sum().backward()
        reports.append(record)
    for ours, theirs in zip(*reports):
        assert [None if g is None else g.tolist() for g in ours] == [None if g is None else g.tolist() for g in theirs]
