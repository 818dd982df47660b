"""Complex autograd with PyTorch's convention: the gradient of a real loss L of z is dL/dRe(z) + i dL/dIm(z)
(the conjugate Wirtinger derivative times 2), so holomorphic rules give g * conj(f'(z)); forward mode gives
f'(z) t; gradcheck perturbs real and imaginary parts separately; transforms follow torch.func."""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.func as ff
from funcgrad.autograd import Function
from funcgrad.autograd import forward_ad as fwAD
from funcgrad.check import GradcheckError, gradcheck, gradgradcheck
from funcgrad.check.properties import assert_grads_close
from tests.budget import examples

Z = np.array([1 + 1j, 0.5 - 0.7j, -0.3 + 0.4j])

# small programs of one complex vector with a real loss; `m` is the module (funcgrad or torch)
PROGRAMS: dict[str, Callable[[Any, Any], Any]] = {
    "abs(z*z)": lambda m, z: (z * z).abs().sum(),
    "exp": lambda m, z: m.exp(z).abs().sum(),
    "sin*z": lambda m, z: (m.sin(z) * z).abs().sum(),
    "cos": lambda m, z: m.cos(z).real.sum(),
    "log": lambda m, z: m.log(z + 2).abs().sum(),
    "sqrt": lambda m, z: m.sqrt(z + 2).imag.sum(),
    "pow3": lambda m, z: (z ** 3).abs().sum(),
    "pow z^z": lambda m, z: ((z + 2) ** z).abs().sum(),
    "tanh": lambda m, z: m.tanh(z).abs().sum(),
    "sigmoid": lambda m, z: m.sigmoid(z).real.sum(),
    "div": lambda m, z: (1 / (z + 2)).abs().sum(),
    "reciprocal": lambda m, z: m.reciprocal(z + 2).imag.sum(),
    "asinh": lambda m, z: m.asinh(z).abs().sum(),
    "real": lambda m, z: (z * z).real.sum(),
    "imag": lambda m, z: (z * z * z).imag.sum(),
    "angle": lambda m, z: m.angle(z * z).sum(),
    "conj": lambda m, z: (m.conj(z) * z * z).abs().sum(),
    "sgn": lambda m, z: m.sgn(z * z).real.sum(),
    "mixed real": lambda m, z: (z * m.exp(z.real)).abs().sum(),
    "prod": lambda m, z: m.prod(z).abs(),
    "mean": lambda m, z: (m.mean(z * z) * z).abs().sum(),
    "var": lambda m, z: m.var(z * z),
    "norm": lambda m, z: (z * z).norm(),
    "matmul": lambda m, z: (m.outer(z, z + 1) @ z).abs().sum(),
    "vdot": lambda m, z: m.vdot(z, z * 1j + z * z).real,
    "einsum": lambda m, z: m.einsum("i,j->ij", z, z * z).abs().sum(),
    "view_as_real": lambda m, z: (m.view_as_real(z * z) ** 3).sum(),
    "view_as_complex": lambda m, z: m.view_as_complex(m.view_as_real(z) * 2.0).abs().sum(),
    "polar": lambda m, z: (m.polar(z.abs(), z.angle() * 2) * z).real.sum(),
    "inv": lambda m, z: m.linalg.inv(m.outer(z, z + 1) + 3 * m.eye(3)).abs().sum(),
    "det": lambda m, z: m.linalg.det(m.outer(z, z * 1j) + 2 * m.eye(3)).abs(),
    "solve": lambda m, z: m.linalg.solve(m.outer(z, z - 1) + 3 * m.eye(3), z * z).abs().sum(),
    "slogdet": lambda m, z: (lambda sign, logabs: (sign * (1 + 2j)).real + sign.imag + logabs)(
        *m.linalg.slogdet(m.outer(z, z * 1j) + 2 * m.eye(3))),  # the sign of a complex det has a gradient
    "eigvalsh": lambda m, z: (m.linalg.eigvalsh(_hermitian(m, z)) * m.arange(1.0, 4.0)).sum(),
    "eigh, phase-free": lambda m, z: (lambda V: (V * V.conj()).real[0].sum() + (V[:, :1] @ V[:, :1].mH).imag[1, 0])(
        m.linalg.eigh(_hermitian(m, z))[1]),
    "cholesky": lambda m, z: (m.linalg.cholesky(_hermitian(m, z)) * (1 + 2j)).real.sum(),
    "svdvals": lambda m, z: (m.linalg.svdvals(_square(m, z)[:, :2]) * m.arange(1.0, 3.0)).sum(),
    "svd, phase-free": lambda m, z: (lambda U, S, Vh: ((U * S) @ Vh[:2] * (1 - 1j)).real.sum()
                                     + (U[:, :1] @ U[:, :1].mH).imag[0, 1])(
        *m.linalg.svd(_square(m, z)[:2], full_matrices=False)),
    "pinv": lambda m, z: (m.linalg.pinv(_square(m, z)[:, 1:]) * (2 + 1j)).real.sum(),
    "qr": lambda m, z: (lambda Q, R: (Q * (1 + 1j)).real.sum() + (R * R * 1j).real.sum())(
        *m.linalg.qr(_square(m, z) + 2)),  # (away from a pivot with real part 0, where LAPACK's signs flip)
    "qr, wide": lambda m, z: (lambda Q, R: (Q * 2j).real.sum() + R.abs().sum())(*m.linalg.qr(_square(m, z)[:2] + 2)),
}


def _square(m: Any, z: Any) -> Any:
    """A general complex 3 x 3 matrix built from z."""
    return m.outer(z, z * 1j + 1) + m.diag(z * z) + m.eye(3)


def _hermitian(m: Any, z: Any) -> Any:
    """A Hermitian positive-definite matrix built from z."""
    b = m.outer(z, z * 1j + 1) + m.diag(z)
    return b @ b.mH + 2 * m.eye(3)


def _funcgrad_grad(program: Callable[[Any, Any], Any], z: np.ndarray) -> np.ndarray:
    leaf = fg.tensor(z, requires_grad=True)
    program(fg, leaf).backward()
    return leaf.grad.data


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    leaf = torch.tensor(Z, requires_grad=True)
    PROGRAMS[name](torch, leaf).backward()
    np.testing.assert_allclose(_funcgrad_grad(PROGRAMS[name], Z), leaf.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_pass_complex_gradcheck_and_gradgradcheck(name: str) -> None:
    z = fg.tensor(Z, requires_grad=True)
    assert gradcheck(lambda z: PROGRAMS[name](fg, z), (z,), check_forward_ad=True)
    assert gradgradcheck(lambda z: PROGRAMS[name](fg, z), (z,))


def test_abs_of_square_has_torchs_gradient() -> None:
    z = fg.tensor(np.array([1 + 1j]), requires_grad=True)
    (z * z).abs().sum().backward()
    assert z.grad.data[0] == 2 + 2j  # d|z^2| = 2 conj(z) z^2 / |z^2| ... = 2 z |z| / |z| for z = 1 + i


def test_real_input_with_complex_intermediate_gets_the_real_part() -> None:
    x = fg.tensor([0.3, -1.2], requires_grad=True)
    (x * (1 + 2j)).abs().sum().backward()
    assert x.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad.data, np.sign(x.data) * abs(1 + 2j))


def test_backward_of_a_complex_scalar_raises_torchs_error() -> None:
    z = fg.tensor(np.array([1 + 1j]), requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs but got "
                                           "complex128"):
        (z * z).sum().backward()
    (z * z).sum().backward(np.array(1 + 0j))  # an explicit gradient is fine
    assert z.grad.data[0] == 2 - 2j


def test_conj_of_a_real_tensor_is_the_tensor_itself() -> None:
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    assert fg.conj(x) is x and x.conj() is x
    array = np.array([1.0, 2.0])
    assert fg.conj(array) is array and fg.conj(1.5) == 1.5 and fg.conj(1 + 2j) == 1 - 2j
    z = fg.tensor(Z, requires_grad=True)
    assert fg.conj(z).grad_fn.name() == "ConjPhysicalBackward0"


def test_ops_without_complex_rules_refuse_to_differentiate_complex_values() -> None:
    z = fg.tensor(Z, requires_grad=True)
    for op in (fg.relu, fg.sign, lambda z: fg.maximum(z, z), fg.amax, lambda z: fg.logsumexp(z, 0),
               lambda z: fg.clamp(z, 0)):
        with pytest.raises(RuntimeError, match="derivative for complex values is not implemented"):
            op(z)
    x = fg.tensor([1.0, -2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for complex values is not implemented"):
        fg.maximum(x, np.array([1j, 2j]))  # a complex operand the op has no rule for
    with fwAD.dual_level():
        dual = fwAD.make_dual(fg.tensor(Z), Z)
        with pytest.raises(RuntimeError, match="derivative for complex values is not implemented"):
            fg.relu(dual)


@pytest.mark.parametrize("vectors, message", [
    (lambda z: fg.linalg.svd(_square(fg, z))[0], "svd_backward: The singular vectors in the complex case"),
    (lambda z: fg.linalg.eigh(_hermitian(fg, z))[1], "linalg_eigh_backward: The eigenvectors in the complex case"),
])
def test_a_loss_on_the_phases_of_complex_singular_or_eigenvectors_raises_torchs_error(vectors: Any,
                                                                                    message: str) -> None:
    z = fg.tensor(Z, requires_grad=True)
    with pytest.raises(RuntimeError, match=message + r" (is|are) specified up to multiplication by e\^\{i phi\}"):
        vectors(z).real.sum().backward()


def test_imag_of_a_real_tensor_raises_torchs_error() -> None:
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        fg.imag(fg.tensor([1.0]))


# ----- gradcheck on complex inputs ------------------------------------------------------------------
class _NoConj(Function):
    """exp with the gradient g * exp(z) instead of torch's g * conj(exp(z)): right for real z only."""

    @staticmethod
    def forward(ctx: Any, z: Any) -> Any:
        out = fg.exp(z)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (out,) = ctx.saved_tensors
        return g * out


def test_gradcheck_perturbs_the_imaginary_part_too() -> None:
    z = fg.tensor(Z, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: nothing is dropped
        assert gradcheck(fg.exp, (z,)) and gradgradcheck(fg.exp, (z,))
        assert gradcheck(fg.exp, (z,), fast_mode=True, check_batched_grad=True)
    for options in ({}, {"fast_mode": True}):
        with pytest.raises(GradcheckError, match="Jacobian mismatch"):
            gradcheck(_NoConj.apply, (z,), **options)
    x = fg.tensor(Z.real, requires_grad=True)
    assert gradcheck(_NoConj.apply, (x,))  # real inputs cannot tell


def test_gradcheck_compares_forward_mode_on_complex_inputs() -> None:
    z = fg.tensor(Z, requires_grad=True)
    assert gradcheck(lambda z: fg.sin(z) * fg.conj(z), (z,), check_forward_ad=True)
    assert gradgradcheck(lambda z: (fg.sin(z) * z).abs(), (z,), check_fwd_over_rev=True)


# ----- forward mode ---------------------------------------------------------------------------------
FORWARD: dict[str, Callable[[Any, Any], Any]] = {
    "mul": lambda m, z: z * z, "exp": lambda m, z: m.exp(z), "abs": lambda m, z: m.abs(z),
    "real": lambda m, z: z.real, "imag": lambda m, z: z.imag, "angle": lambda m, z: m.angle(z),
    "conj": lambda m, z: m.conj(z), "sgn": lambda m, z: m.sgn(z), "log": lambda m, z: m.log(z),
    "norm": lambda m, z: (z * z).norm(), "var": lambda m, z: m.var(z), "prod": lambda m, z: m.prod(z),
    "matmul": lambda m, z: m.outer(z, z) @ z, "vdot": lambda m, z: m.vdot(z, z * z),
    "slogdet sign": lambda m, z: m.linalg.slogdet(m.outer(z, z * 1j) + 2 * m.eye(3))[0],
    "slogdet logabsdet": lambda m, z: m.linalg.slogdet(m.outer(z, z * 1j) + 2 * m.eye(3))[1],
    "eigvalsh": lambda m, z: m.linalg.eigvalsh(_hermitian(m, z)),
    "cholesky": lambda m, z: m.linalg.cholesky(_hermitian(m, z)),
    "svdvals": lambda m, z: m.linalg.svdvals(_square(m, z)),
    "pinv": lambda m, z: m.linalg.pinv(_square(m, z)[1:]),
    "qr Q": lambda m, z: m.linalg.qr(_square(m, z)[:, :2] + 2)[0],
    "qr R": lambda m, z: m.linalg.qr(_square(m, z) + 2)[1],
}
T = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j])


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_mode_matches_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as torch_fwAD

    with torch_fwAD.dual_level():
        expected = torch_fwAD.unpack_dual(FORWARD[name](torch, torch_fwAD.make_dual(torch.tensor(Z),
                                                                                       torch.tensor(T)))).tangent.resolve_conj()
    with fwAD.dual_level():
        got = fwAD.unpack_dual(FORWARD[name](fg, fwAD.make_dual(fg.tensor(Z), T))).tangent
    assert got.dtype == expected.numpy().dtype
    np.testing.assert_allclose(got.data, expected.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_mode_is_the_adjoint_of_reverse_mode(name: str) -> None:
    """Re <u, J t> (forward) == Re <J* u, t> (reverse), for complex t and u."""
    rng = np.random.default_rng(0)
    with fwAD.dual_level():
        jt = fwAD.unpack_dual(FORWARD[name](fg, fwAD.make_dual(fg.tensor(Z), T))).tangent.data
    z = fg.tensor(Z, requires_grad=True)
    out = FORWARD[name](fg, z)
    u = rng.normal(size=out.shape) + (1j * rng.normal(size=out.shape) if out.dtype.kind == "c" else 0)
    (g,) = fg.autograd.grad(out, z, u)
    assert np.real(np.vdot(u, jt)) == pytest.approx(np.real(np.vdot(g.data, T)), rel=1e-12, abs=1e-12)


# ----- func transforms, as torch.func ---------------------------------------------------------------
def test_func_transforms_match_torch_func() -> None:
    torch = pytest.importorskip("torch")
    t = torch.tensor(Z)
    loss = PROGRAMS["sin*z"]
    np.testing.assert_allclose(ff.grad(lambda z: loss(fg, z))(Z), torch.func.grad(lambda z: loss(torch, z))(t))
    w = np.array([1 + 0.5j, -1j, 2.0])
    _, pull = ff.vjp(lambda z: fg.exp(z) * z, Z)
    _, torch_pull = torch.func.vjp(lambda z: torch.exp(z) * z, t)
    np.testing.assert_allclose(pull(w)[0], torch_pull(torch.tensor(w))[0].numpy(), rtol=1e-12)
    out, jvp = ff.jvp(lambda z: fg.exp(z) * z, (Z,), (T,))
    _, torch_jvp = torch.func.jvp(lambda z: torch.exp(z) * z, (t,), (torch.tensor(T),))
    np.testing.assert_allclose(jvp, torch_jvp.numpy(), rtol=1e-12)
    _, jvp = ff.jvp(lambda z: fg.abs(z), (Z,), (T,))  # a real output of a complex input
    _, torch_jvp = torch.func.jvp(torch.abs, (t,), (torch.tensor(T),))
    np.testing.assert_allclose(jvp, torch_jvp.numpy(), rtol=1e-12)


def test_func_transforms_raise_torch_funcs_errors_for_complex_values() -> None:
    real = np.array([1.0, 2.0])
    for transform in (ff.jacrev, ff.jacfwd):
        name = transform.__name__
        with pytest.raises(RuntimeError, match=f"{name}: Expected all inputs to be real but received complex "
                                               "tensor at flattened input idx: 0"):
            transform(lambda z: z * z)(Z)
        with pytest.raises(RuntimeError, match=f"{name}: Expected all outputs to be real"):
            transform(lambda x: x * (1 + 1j))(real)
    with pytest.raises(RuntimeError, match="jacfwd: Expected all inputs to be real"):
        ff.hessian(lambda z: fg.abs(z).sum())(Z)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs"):
        ff.grad(lambda z: (z * z).sum())(Z)


# ----- hypothesis: holomorphic and real-valued ops over complex values inside their safe domains -------
def _complex(shape: tuple[int, ...], re: tuple[float, float], im: float) -> st.SearchStrategy:
    size = int(np.prod(shape))
    floats = st.floats(-1.0, 1.0, allow_nan=False)
    return st.tuples(st.lists(floats, min_size=size, max_size=size), st.lists(floats, min_size=size, max_size=size)
                     ).map(lambda parts: ((re[0] + re[1]) / 2 + (re[1] - re[0]) / 2 * np.array(parts[0])
                                          + 1j * im * np.array(parts[1])).reshape(shape))


SAFE: dict[str, tuple[Callable[..., Any], tuple[float, float], float]] = {  # op, real-part range, |imag| bound
    "mul": (lambda z: z * (z + 1), (-2, 2), 2), "exp": (fg.exp, (-2, 2), 2), "log": (fg.log, (0.3, 3), 2),
    "sqrt": (fg.sqrt, (0.3, 3), 2), "tanh": (fg.tanh, (-1, 1), 0.5), "sin": (fg.sin, (-2, 2), 1),
    "reciprocal": (fg.reciprocal, (0.5, 2), 2), "abs": (fg.abs, (0.3, 2), 2), "angle": (fg.angle, (0.3, 2), 2),
    "sgn": (fg.sgn, (0.3, 2), 2), "norm": (lambda z: fg.norm(z), (0.3, 2), 2),
    "prod": (lambda z: fg.prod(z), (0.3, 2), 2),  # away from 0: a subnormal factor overflows 1/z, as in torch
    "matmul": (lambda z: fg.outer(z.flatten(), z.flatten()) @ z.flatten(), (-2, 2), 2),
}


@pytest.mark.parametrize("name", sorted(SAFE))
def test_complex_derivatives_on_random_values(name: str) -> None:
    op, re, im = SAFE[name]

    @settings(max_examples=examples(8), deadline=None)
    @given(z=st.sampled_from([(3,), (2, 2), ()]).flatmap(lambda shape: _complex(shape, re, im)))
    def check(z: np.ndarray) -> None:
        assert_grads_close(op, z, order=2)

    check()


def test_conjugate_transposes_are_torchs() -> None:
    """``t.mH`` (a batch of matrices) and ``t.H`` (a matrix), as torch's; they were missing."""
    b = fg.tensor(np.arange(12.0).reshape(2, 2, 3) * (1 + 2j), requires_grad=True)
    np.testing.assert_array_equal(b.mH.detach().numpy(), np.conj(np.swapaxes(b.detach().numpy(), -1, -2)))
    np.testing.assert_array_equal(b[0].H.detach().numpy(), np.conj(b.detach().numpy()[0].T))
    assert gradcheck(lambda t: t.mH, (b,)) and gradcheck(lambda t: t[1].H, (b,))
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
        _ = b.H
