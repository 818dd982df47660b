"""PyTorch's functions and Tensor methods added for code written for torch, against torch itself: values, result
dtypes, gradients and result types (skipped without torch)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(11)
X = _rng.uniform(-2.0, 2.0, (3, 4))
Y = _rng.uniform(-2.0, 2.0, (3, 4))
P = _rng.uniform(0.2, 0.8, (3, 4))
V3 = _rng.uniform(-2.0, 2.0, (2, 3))
NANS = np.array([[1.5, np.nan, -np.inf, 0.0], [np.inf, -2.0, 3.0, np.nan], [0.5, 0.25, -1.0, 2.0]])

# name -> call written once for both modules, with its float inputs (all differentiable)
CALLS: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "lerp": (lambda m, a, b: m.lerp(a, b, 0.3), (X, Y)),
    "lerp_tensor": (lambda m, a, b, w: m.lerp(a, b, w), (X, Y, P)),
    "addcmul": (lambda m, a, b, c: m.addcmul(a, b, c, value=0.5), (X, Y, P)),
    "addcdiv": (lambda m, a, b, c: a.addcdiv(b, c, value=-2), (X, Y, P)),
    "logit": (lambda m, p: m.logit(p), (P,)),
    "logit_eps": (lambda m, p: p.logit(0.3), (P,)),
    "xlogy": (lambda m, a, p: m.xlogy(a, p), (X, P)),
    "fmod": (lambda m, a, p: m.fmod(a, p), (X, P)),
    "frac": (lambda m, a: a.frac(), (X,)),
    "deg2rad": (lambda m, a: m.deg2rad(a), (X,)),
    "rad2deg": (lambda m, a: a.rad2deg(), (X,)),
    "true_divide": (lambda m, a, p: m.true_divide(a, p), (X, P)),
    "float_power": (lambda m, p, a: m.float_power(p, a), (P, X)),
    "nan_to_num": (lambda m, a: m.nan_to_num(a, 1.0, 5.0), (NANS,)),
    "nan_to_num_defaults": (lambda m, a: a.nan_to_num(), (NANS,)),
    "diff": (lambda m, a: m.diff(a, 2, 1), (X,)),
    "diff_prepend": (lambda m, a, b: m.diff(a, 1, 0, prepend=b[:1], append=b), (X, Y)),
    "inner": (lambda m, a, b: m.inner(a, b), (X, Y)),
    "cross": (lambda m, a, b: m.cross(a, b, dim=1), (V3, V3[::-1].copy())),
    "cross_default": (lambda m, a, b: m.cross(a, b), (V3.T.copy(), V3.T[::-1].copy())),
    "kron": (lambda m, a, b: m.kron(a, b), (V3, X[:2, :2])),
    "dist": (lambda m, a, b: m.dist(a, b), (X, Y)),
    "dist_p1": (lambda m, a, b: a.dist(b, 1), (X, Y)),
    "std_mean": (lambda m, a: m.std_mean(a, 1), (X,)),
    "var_mean": (lambda m, a: m.var_mean(a, 0, correction=0, keepdim=True), (X,)),
    "nansum": (lambda m, a: m.nansum(a, 1), (NANS,)),
    "nanmean": (lambda m, a: a.nanmean(0), (NANS,)),
    "logcumsumexp": (lambda m, a: m.logcumsumexp(a, 1), (X,)),
    "logcumsumexp_far": (lambda m, a: a.logcumsumexp(0), (X * 400,)),
    "repeat_interleave": (lambda m, a: m.repeat_interleave(a, 2, 0), (X,)),
    "repeat_interleave_counts": (lambda m, a: a.repeat_interleave(m.tensor([2, 0, 1, 3]), dim=1), (X,)),
    "fliplr": (lambda m, a: m.fliplr(a), (X,)),
    "flipud": (lambda m, a: a.flipud(), (X,)),
    "rot90": (lambda m, a: m.rot90(a, 1), (X,)),
    "rot90_neg": (lambda m, a: a.rot90(-3, (1, 0)), (X,)),
    "moveaxis": (lambda m, a: m.moveaxis(a.reshape(3, 2, 2), 0, 2), (X,)),
    "swapdims": (lambda m, a: a.swapdims(0, 1), (X,)),
    "index_add": (lambda m, a, b: a.index_add(0, m.tensor([2, 0, 2]), b, alpha=3), (X, Y)),
    "index_fill": (lambda m, a: a.index_fill(1, m.tensor([3, 0]), -1.5), (X,)),
    "sort": (lambda m, a: m.sort(a, 1), (X,)),
    "sort_descending": (lambda m, a: a.sort(0, descending=True), (X,)),
    "argsort": (lambda m, a: m.argsort(a, 1, descending=True), (X,)),
    "msort": (lambda m, a: m.msort(a), (X,)),
    "topk": (lambda m, a: m.topk(a, 2), (X,)),
    "topk_smallest": (lambda m, a: a.topk(2, 0, largest=False), (X,)),
    "kthvalue": (lambda m, a: m.kthvalue(a, 3, 1), (X,)),
    "kthvalue_keepdim": (lambda m, a: a.kthvalue(2, 0, True), (X,)),
    "median": (lambda m, a: m.median(a), (X,)),
    "median_dim": (lambda m, a: a.median(1, keepdim=True), (X,)),
    "median_ties": (lambda m, a: m.median(a.round()), (X * 2,)),
    "aminmax": (lambda m, a: m.aminmax(a, dim=1), (X,)),
    "aminmax_all": (lambda m, a: m.aminmax(a.round()), (X,)),
    "cummax": (lambda m, a: m.cummax(a, 1), (X,)),
    "cummin": (lambda m, a: a.cummin(0), (X.round(),)),
    "quantile": (lambda m, a: m.quantile(a, 0.3, 1), (X,)),
    "quantile_vector_q": (lambda m, a: a.quantile(m.tensor([0.2, 0.9], dtype=a.dtype), 0, keepdim=True), (X,)),
    "quantile_all_nearest": (lambda m, a: m.quantile(a, 0.45, interpolation="nearest"), (X,)),
    "quantile_nan": (lambda m, a: m.quantile(a, 0.5, 1), (NANS,)),
    "nanquantile": (lambda m, a: m.nanquantile(a, 0.7, 1), (NANS,)),
    "nanquantile_all": (lambda m, a: a.nanquantile(0.25), (NANS,)),
    "nanmedian": (lambda m, a: m.nanmedian(a, 1), (NANS,)),
    "nanmedian_all": (lambda m, a: a.nanmedian(), (NANS,)),
    "mode": (lambda m, a: m.mode(a.round(), 0), (X,)),
    "tensor_split": (lambda m, a: m.tensor_split(a, 3, 1), (X,)),
    "take": (lambda m, a: m.take(a, m.tensor([[0, 11], [5, -1]])), (X,)),
    "diag_embed": (lambda m, a: m.diag_embed(a, -1, 0, 2), (X,)),
    "diagflat": (lambda m, a: m.diagflat(a[:2, :2], 2), (X,)),
    "heaviside": (lambda m, a: m.heaviside(a.round(), a[0]).detach(), (X,)),
    "all": (lambda m, a: m.all(a.round(), 1), (X,)),
    "any": (lambda m, a: m.any(a.round() > 1, 0, keepdim=True), (X,)),
    "unique": (lambda m, a: m.unique(a.round().detach(), return_inverse=True, return_counts=True), (X,)),
    "unfold": (lambda m, a: a.unfold(1, 2, 1), (X,)),
    "index_copy": (lambda m, a, b: a.index_copy(0, m.tensor([2, 0]), b[:2]), (X, Y)),
    "masked_scatter": (lambda m, a, b: a.masked_scatter(a > 0, b), (X, Y)),
    "hsplit": (lambda m, a: m.hsplit(a, [1, 3]), (X,)),
    "sum_to_size": (lambda m, a: a.sum_to_size(3, 1), (X,)),
    "histc": (lambda m, a: m.histc(a.detach(), bins=5), (X,)),
    "count_nonzero": (lambda m, a: m.count_nonzero(a.round(), 1), (X,)),
    "isclose": (lambda m, a, b: m.isclose(a, a + b * 1e-6), (X, Y)),
    "contiguous": (lambda m, a: a.t().contiguous(), (X,)),
    "type_as": (lambda m, a: a.type_as(m.zeros(1, dtype=np.float32 if m is fg else torch.float32)), (X,)),
    "half": (lambda m, a: a.half(), (X,)),
    "where_method": (lambda m, a, b: a.where(a > 0, b), (X, Y)),
    "where_method_number": (lambda m, a: a.where(a < 1, 0.5), (X,)),
    "add_alpha": (lambda m, a, b: m.add(a, b, alpha=-2), (X, Y)),
    "add_alpha_method": (lambda m, a, b: a.add(b[0], alpha=0.5), (X, Y)),
    "sub_alpha": (lambda m, a, b: m.sub(a, b, alpha=3), (X, Y)),
    "sub_alpha_method": (lambda m, a, b: a.sub(b, alpha=-1.5), (X, Y)),
    "div_method_floor": (lambda m, a, p: a.div(p, rounding_mode="floor").detach(), (X, P)),  # (torch records it)
    "div_trunc": (lambda m, a, p: m.div(a, p, rounding_mode="trunc"), (X, P)),
    "var_unbiased": (lambda m, a: m.var(a, 1, unbiased=False, keepdim=True), (X,)),
    "var_unbiased_positional": (lambda m, a: a.var(False), (X,)),
    "std_unbiased": (lambda m, a: a.std(0, True), (X,)),
    "std_unbiased_keyword": (lambda m, a: m.std(a, dim=(0, 1), unbiased=False), (X,)),
    "norm_nuc": (lambda m, a: a.norm("nuc"), (X,)),
    "norm_nuc_dims": (lambda m, a: m.norm(a.reshape(2, 3, 2), "nuc", dim=(0, 2), keepdim=True), (X,)),
    "norm_fro": (lambda m, a: a.norm(p="fro"), (X,)),
    "norm_fro_dim": (lambda m, a: a.norm("fro", dim=1), (X,)),
    "hstack": (lambda m, a, b: m.hstack([a, b[:, :1]]), (X, Y)),
    "hstack_vectors": (lambda m, a, b: m.hstack((a[0], b[1], a[0, 0])), (X, Y)),
    "vstack": (lambda m, a, b: m.vstack([a, b[0]]), (X, Y)),
    "dstack": (lambda m, a, b: m.dstack([a, b]), (X, Y)),
    "dstack_vectors": (lambda m, a, b: m.dstack([a[0], b[0]]), (X, Y)),
    "column_stack": (lambda m, a, b: m.column_stack([a, b[:, 0]]), (X, Y)),
    "column_stack_0d": (lambda m, a, b: m.column_stack([a[0, 0], b[0, 0]]), (X, Y)),
    "meshgrid_ij": (lambda m, a, b: m.meshgrid(a[0], b[:, 0], indexing="ij"), (X, Y)),
    "meshgrid_xy_list": (lambda m, a, b: m.meshgrid([a[0], b[:, 0], a[1, :2]], indexing="xy"), (X, Y)),
    "complex": (lambda m, a, b: m.complex(a, b), (X, Y)),
    "complex_broadcast": (lambda m, a, b: m.complex(a[:, :1], b[0]), (X, Y)),
}


@pytest.mark.parametrize(("call", "error"), [
    (lambda m, a: m.add(a.long(), a.long(), alpha=0.5), "For integral input tensors, argument alpha must not be a "),
    (lambda m, a: m.sub(a, a, alpha=1j), "For non-complex input tensors, argument alpha must not be a complex"),
    (lambda m, a: a.div(2, rounding_mode="round"), "div expected rounding_mode to be one of None, 'trunc', or"),
    (lambda m, a: m.ones(2, 2, 2).norm("nuc"), "linalg.matrix_norm: dim must be a 2-tuple"),
    (lambda m, a: m.hstack([]), "hstack expects a non-empty TensorList"),
    (lambda m, a: m.vstack([a, a[0, :2]]), "Sizes of tensors must match except in dimension 0"),
    (lambda m, a: m.meshgrid(a[0], indexing="ji"), 'indexing must be one of "xy" or "ij", but received: ji'),
    (lambda m, a: m.meshgrid(a, indexing="ij"), "Expected 0D or 1D tensor in the tensor list"),
    (lambda m, a: m.meshgrid(a[0], a[0].long(), indexing="ij"), "meshgrid expects all tensors to have the same dtype"),
    (lambda m, a: m.complex(a.long(), a.long()), "Expected both inputs to be Half, Float or Double tensors"),
    (lambda m, a: m.complex(a.float(), a), "Expected object of scalar type Float but got scalar type Double"),
])
def test_errors_are_torchs(call: Callable[..., Any], error: str) -> None:
    for module in (fg, torch):
        with pytest.raises(RuntimeError, match=error.replace("(", r"\(").replace("'", ".")):
            call(module, module.tensor(X))


def test_meshgrid_without_indexing_warns_and_takes_ij_as_torch() -> None:
    for module in (fg, torch):
        with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
            grids = module.meshgrid(module.arange(3.0), module.arange(2.0))
        assert [tuple(g.shape) for g in grids] == [(3, 2), (3, 2)]
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        fg.hstack(fg.tensor(X))
    with pytest.raises(TypeError, match="give correction or unbiased, not both"):
        fg.var(fg.tensor(X), unbiased=True, correction=0)


def _module_inputs(module: Any, arrays: tuple[np.ndarray, ...]) -> list[Any]:
    if module is torch:
        return [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    return [fg.tensor(a, requires_grad=True) for a in arrays]


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, tuple) else [out]


def _array(t: Any) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") and not isinstance(t, fg.Tensor) else np.asarray(t.data)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_dtypes_and_gradients_are_torchs(name: str) -> None:
    call, arrays = CALLS[name]
    ours_in, theirs_in = _module_inputs(fg, arrays), _module_inputs(torch, arrays)
    ours, theirs = call(fg, *ours_in), call(torch, *theirs_in)
    assert type(ours).__name__ == type(theirs).__name__ or (isinstance(ours, tuple) and isinstance(theirs, tuple))
    if hasattr(theirs, "_fields"):
        assert ours._fields == theirs._fields
    for o, t in zip(_outputs(ours), _outputs(theirs), strict=True):
        np.testing.assert_allclose(_array(o), _array(t), rtol=1e-10, atol=1e-12, equal_nan=True)
        assert np.dtype(_array(o).dtype) == np.dtype(_array(t).dtype)
    differentiable = [(o, t) for o, t in zip(_outputs(ours), _outputs(theirs)) if t.requires_grad]
    assert [o.requires_grad for o, _ in differentiable] == [True] * len(differentiable)
    if not differentiable:
        return
    seeds = [_rng.uniform(-1.0, 1.0, np.shape(_array(t))) for _, t in differentiable]
    ours_grads = fg.autograd.grad([o for o, _ in differentiable], ours_in, [fg.tensor(s).to(o.dtype) for s, (o, _) in
                                                                              zip(seeds, differentiable)],
                                  allow_unused=True, materialize_grads=True)
    theirs_grads = torch.autograd.grad([t for _, t in differentiable], theirs_in,
                                       [torch.tensor(s, dtype=t.dtype) for s, (_, t) in zip(seeds, differentiable)],
                                       allow_unused=True, materialize_grads=True)
    for g, h in zip(ours_grads, theirs_grads, strict=True):
        np.testing.assert_allclose(_array(g), _array(h), rtol=1e-7, atol=1e-9, equal_nan=True)


def test_predicates_counts_and_layout_are_torchs() -> None:
    a = np.arange(12.0).reshape(3, 4)
    ours, theirs = fg.tensor(a), torch.tensor(a)
    assert ours.stride() == theirs.stride() and ours.t().stride() == theirs.t().stride()
    assert ours.t().is_contiguous() == theirs.t().is_contiguous()
    assert ours[:, :1].is_contiguous() == theirs[:, :1].is_contiguous()
    assert ours.element_size() == theirs.element_size() and ours.nelement() == theirs.nelement()
    assert fg.equal(ours, ours) == torch.equal(theirs, theirs)
    assert fg.allclose(ours, ours + 1e-7) == torch.allclose(theirs, theirs + 1e-7)
    for method in ("int", "long", "bool"):
        assert getattr(ours, method)().tolist() == getattr(theirs, method)().tolist()
    assert str(ours.int().dtype) == str(theirs.int().dtype).removeprefix("torch.")
    assert ours.new_full((2,), 3).tolist() == theirs.new_full((2,), 3).tolist()
