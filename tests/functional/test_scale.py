"""Jacobians at scale: chunked passes equal one pass, memory bounds, executors, progress, strategy="auto"."""
from __future__ import annotations

import pickle
import tracemalloc
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.func as ff
from funcgrad.functional import hessian as torch_hessian
from funcgrad.functional import jacobian as torch_jacobian
from tests.budget import examples


def residual(u: Any) -> Any:
    """F(u) = L u + u**3 - sin(u), L the 1-D Laplacian (Dirichlet), written with slicing (module level: it pickles)."""
    lap = fg.cat([-2 * u[:1] + u[1:2], u[:-2] - 2 * u[1:-1] + u[2:], u[-2:-1] - 2 * u[-1:]])
    return lap + u ** 3 - fg.sin(u)


def energy(u: Any) -> Any:
    """A scalar whose Hessian is tridiagonal."""
    return fg.sum(residual(u) ** 2) / 2


def two_args(x: Any, y: Any) -> Any:
    """A function of a pytree of arguments returning a pytree."""
    return {"a": fg.sin(x)[:, None] * y[None, :], "b": (x ** 2).sum() * y}


def _assert_trees_close(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_trees_close(a[k], b[k])
    elif isinstance(a, tuple | list):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _assert_trees_close(u, v)
    else:
        a, b = (t.numpy() if isinstance(t, fg.Tensor) else t for t in (a, b))
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@settings(max_examples=examples(10), deadline=None)
@given(st.integers(1, 9), st.integers(2, 6), st.integers(1, 4))
def test_chunked_jacobians_equal_one_pass_for_every_chunk_size(chunk: int, n: int, m: int) -> None:
    rng = np.random.default_rng(n * 10 + m)
    x, y = rng.uniform(-1, 1, n), rng.uniform(-1, 1, m)
    for transform in (ff.jacrev, ff.jacfwd):
        expected = transform(two_args, argnums=(0, 1))(x, y)
        _assert_trees_close(transform(two_args, argnums=(0, 1), chunk_size=chunk)(x, y), expected)
    _assert_trees_close(ff.hessian(energy, chunk_size=chunk)(x), ff.hessian(energy)(x))
    tx, ty = fg.tensor(x), fg.tensor(y)

    def pair(a: Any, b: Any) -> Any:
        return fg.sin(a)[:, None] * b[None, :], a.sum() * b

    for strategy in ("reverse-mode", "forward-mode", "auto"):
        _assert_trees_close(torch_jacobian(pair, (tx, ty), vectorize=True, strategy=strategy, chunk_size=chunk),
                            torch_jacobian(pair, (tx, ty), vectorize=True))
    _assert_trees_close(torch_hessian(lambda a, b: (fg.sin(a) * (b ** 2).sum()).sum(), (tx, ty), vectorize=True,
                                      chunk_size=chunk),
                        torch_hessian(lambda a, b: (fg.sin(a) * (b ** 2).sum()).sum(), (tx, ty)))


def test_has_aux_and_tensor_inputs_with_chunks() -> None:
    x = np.linspace(0.1, 1.0, 5)
    J, aux = ff.jacrev(lambda x: (fg.tanh(x), "aux"), has_aux=True, chunk_size=2)(x)
    assert aux == "aux"
    np.testing.assert_allclose(J, np.diag(1 - np.tanh(x) ** 2))
    J = ff.jacfwd(fg.tanh, chunk_size=2)(fg.tensor(x))
    assert isinstance(J, fg.Tensor) and not J.requires_grad
    np.testing.assert_allclose(J.numpy(), np.diag(1 - np.tanh(x) ** 2))


def test_max_memory_picks_chunks_within_the_budget() -> None:
    n = 512
    x = np.linspace(0.0, 1.0, n)
    expected = ff.hessian(energy)(x)
    calls = []

    def counted(u: Any) -> Any:
        calls.append(1)
        return energy(u)

    budget = 2 * 2 ** 20  # one pass over all 512 seeds needs several times this
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        H = ff.hessian(counted, max_memory=budget)(x)
        peak = tracemalloc.get_traced_memory()[1] - base - H.nbytes
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(H, expected, rtol=1e-12, atol=1e-12)
    assert len(calls) > 2  # the seeds were split
    assert peak < 2 * budget


def test_process_executor_equals_serial_and_needs_picklable_functions() -> None:
    x = np.linspace(0.0, 1.0, 12)
    with ProcessPoolExecutor(2) as pool:
        np.testing.assert_allclose(ff.jacrev(residual, chunk_size=5, executor=pool)(x), ff.jacrev(residual)(x))
        np.testing.assert_allclose(ff.hessian(energy, chunk_size=4, executor=pool)(x), ff.hessian(energy)(x))
        with pytest.raises(TypeError, match="picklable.*module level"):
            ff.jacfwd(lambda u: u * 2, chunk_size=3, executor=pool)(x)
    with ThreadPoolExecutor(2) as pool:
        np.testing.assert_allclose(ff.jacrev(residual, chunk_size=3, executor=pool)(x), ff.jacrev(residual)(x))


def test_dask_executor_equals_serial() -> None:
    distributed = pytest.importorskip("distributed")
    cloudpickle = pytest.importorskip("cloudpickle")
    import sys

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import this test module
    x = np.linspace(0.0, 1.0, 10)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        executor = client.get_executor()
        np.testing.assert_allclose(ff.jacrev(residual, chunk_size=4, executor=executor)(x), ff.jacrev(residual)(x))
        sparse = ff.sparse_hessian(energy, chunk_size=1, executor=executor)(x)
        np.testing.assert_allclose(sparse.toarray(), ff.hessian(energy)(x), atol=1e-12)


def test_progress_reports_every_row(capsys: pytest.CaptureFixture[str]) -> None:
    ff.jacrev(residual, chunk_size=2, progress=True)(np.linspace(0, 1, 6))
    err = capsys.readouterr().err
    assert "jacrev" in err and "6/6" in err


def test_strategy_auto_picks_the_smaller_side() -> None:
    from funcgrad.functional import torch_style

    wide = fg.tensor(np.ones(2))
    assert torch_style._pick_strategy(lambda x: fg.cat([x, x, x]), wide, vectorize=True) == "forward-mode"
    assert torch_style._pick_strategy(lambda x: x.sum(), wide, vectorize=True) == "reverse-mode"
    assert torch_style._pick_strategy(lambda x: fg.cat([x, x, x]), wide, vectorize=False) == "reverse-mode"
    np.testing.assert_allclose(torch_jacobian(lambda x: fg.cat([x, x]), wide, vectorize=True, strategy="auto"),
                               np.vstack([np.eye(2), np.eye(2)]))


def test_bad_scale_options_raise_clear_errors() -> None:
    x = np.ones(3)
    with pytest.raises(ValueError, match="chunk_size must be a positive int"):
        ff.jacrev(fg.sin, chunk_size=0)
    with pytest.raises(ValueError, match="max_memory must be a positive"):
        ff.jacfwd(fg.sin, max_memory=-1)
    with pytest.raises(TypeError, match="concurrent.futures.Executor"):
        ff.hessian(energy, executor="dask")
    with pytest.raises(ValueError, match="vectorize=True"):
        torch_jacobian(fg.sin, fg.tensor(x), chunk_size=2)
    with pytest.raises(ValueError, match="create_graph"):
        torch_jacobian(fg.sin, fg.tensor(x), vectorize=True, create_graph=True, chunk_size=2)
    with pytest.raises(ValueError, match="outermost transform"):  # chunks cannot carry an outer transform's graph
        ff.jacrev(lambda u: ff.jacrev(fg.sin, chunk_size=2)(u).sum(0))(x)


def test_products_pickle_without_their_pass() -> None:
    from funcgrad.functional._blocks import Products

    products = Products(residual, (np.ones(4),), 0, "reverse", "jacrev")
    products(np.eye(4)[:2])
    clone = pickle.loads(pickle.dumps(products))
    assert clone._graph is None and clone.call is None
    np.testing.assert_allclose(clone(np.eye(4)[2:]), products(np.eye(4)[2:]))


def test_gradcheck_progress_counts_the_columns(capsys: pytest.CaptureFixture[str]) -> None:
    from funcgrad.check import gradcheck

    assert gradcheck(fg.sin, (fg.randn(7, seed=0, requires_grad=True),), progress=True)
    err = capsys.readouterr().err
    assert "finite differences of input 0" in err and "7/7" in err
