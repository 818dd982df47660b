"""Samples of NumPy's entry points on Tensors (funcgrad/ops/numpy_protocols.py, numpy_functions.py).

``SAMPLES[entry]`` lists calls of a NumPy ufunc, ufunc method (``(np.add, "reduce")``) or function, with
``S`` as for the table (float arrays become leaves). Each is checked three ways: the value equals NumPy's
on the plain arrays, gradcheck and gradgradcheck pass through the NumPy entry point.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tests.ops.sampling import A, C, P, S

_DISTINCT = np.array([[0.3, -1.2, 2.0, 0.9], [1.5, 0.1, -0.4, -2.2], [-0.7, 1.1, 0.6, 1.9]])  # no ties
_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
_WITH_NAN = np.array([[0.3, np.nan, 2.0, 0.9], [1.5, 0.1, -0.4, -2.2], [np.nan, 1.1, 0.6, np.nan]])
_WELL = np.array([[2.0, 0.3, -0.4], [0.1, 1.5, 0.2], [0.3, -0.2, 1.8]])
_SOME = np.array([True, False, True, True])  # a where= mask of rows of 4
_SOME_2D = np.array([[True, False, True, True], [False, False, False, False], [False, True, True, False]])

SAMPLES: dict[Any, list[S]] = {
    # ----- ufuncs -----------------------------------------------------------------------------------------
    np.add: [S(A(3, 4), A(4)), S(np.ones(3), A(3)), S(2.0, A(3))], np.subtract: [S(A(3), A(2, 3))],
    np.multiply: [S(A(3, 4), A(4)), S(np.float64(2.0), A(3))], np.true_divide: [S(A(3), P(3)), S(A(3), 2.0)],
    np.negative: [S(A(3))], np.positive: [S(A(3))], np.power: [S(P(3), A(3)), S(A(3), np.array([2, 3, 1]))],
    np.remainder: [S(np.array([0.3, 1.4, 2.2]), np.array(1.5))], np.reciprocal: [S(P(3))],
    np.matmul: [S(A(2, 3), A(3, 4)), S(np.ones((2, 3)), A(3)), S(A(3), A(3, 2))],
    np.exp: [S(A(3))], np.exp2: [S(A(3))], np.expm1: [S(A(3))], np.log: [S(P(3))], np.log2: [S(P(3))],
    np.log10: [S(P(3))], np.log1p: [S(P(3))], np.sqrt: [S(P(3))], np.square: [S(A(3))],
    np.logaddexp: [S(A(3), A(2, 3))],
    np.sin: [S(A(3))], np.cos: [S(A(3))], np.tan: [S(A(3, lo=-1, hi=1))], np.arcsin: [S(A(3, lo=-0.8, hi=0.8))],
    np.arccos: [S(A(3, lo=-0.8, hi=0.8))], np.arctan: [S(A(3))], np.arctan2: [S(A(3), P(3))],
    np.hypot: [S(P(3), A(3))], np.sinh: [S(A(3))], np.cosh: [S(A(3))], np.tanh: [S(A(3))],
    np.arcsinh: [S(A(3))], np.arccosh: [S(A(3, lo=1.2, hi=3))], np.arctanh: [S(A(3, lo=-0.8, hi=0.8))],
    np.absolute: [S(np.array([0.5, -1.0, 2.0]))], np.fabs: [S(np.array([0.5, -1.0, 2.0]))],
    np.sign: [S(np.array([0.5, -1.0, 2.0])), S(C(3))], np.floor: [S(np.array([0.5, -1.2, 2.3]))],
    np.ceil: [S(np.array([0.5, -1.2, 2.3]))], np.rint: [S(np.array([0.2, -1.2, 2.3]))],
    np.trunc: [S(np.array([0.5, -1.2, 2.3]))],
    np.maximum: [S(np.array([0.5, -1.0, 2.0]), np.array([1.0, -2.0, 0.0]))],
    np.minimum: [S(np.array([0.5, -1.0, 2.0]), np.array([1.0, -2.0, 0.0]))],
    np.fmax: [S(np.array([0.5, -1.0, 2.0]), np.array([1.0, -2.0, 0.0]))],
    np.fmin: [S(np.array([0.5, -1.0, 2.0]), np.array([1.0, -2.0, 0.0]))],
    np.deg2rad: [S(A(3))], np.radians: [S(A(3))], np.rad2deg: [S(A(3))], np.degrees: [S(A(3))],
    np.logaddexp2: [S(A(3), A(2, 3))], np.vecdot: [S(A(2, 3), A(3)), S(C(2, 3), C(2, 3))],
    np.cbrt: [S(np.array([-8.0, -0.3, 0.5, 2.7]))],
    np.float_power: [S(P(3), A(3)), S(A(2, 3), np.array([2, 3, 1])), S(C(3), 2.0)],
    (np.add, "reduce"): [S(A(3, 4)), S(A(3, 4), axis=1, keepdims=True), S(A(3, 4), axis=None)],
    (np.multiply, "reduce"): [S(A(3, 4), axis=1)], (np.maximum, "reduce"): [S(_DISTINCT)],
    (np.minimum, "reduce"): [S(_DISTINCT, axis=1)], (np.logaddexp, "reduce"): [S(A(3, 4), axis=-1)],
    (np.add, "accumulate"): [S(A(3, 4)), S(A(3, 4), axis=1)], (np.multiply, "accumulate"): [S(A(4))],
    (np.multiply, "outer"): [S(A(3), A(2))], (np.subtract, "outer"): [S(A(2, 2), A(3))],
    # ----- reductions -------------------------------------------------------------------------------------
    np.sum: [S(A(3, 4)), S(A(3, 4), axis=0), S(A(2, 3, 4), axis=(0, 2), keepdims=True), S(A(3), dtype=np.float64),
             S(A(3, 4), where=_SOME, initial=0.5), S(A(3, 4), axis=1, where=_SOME_2D)],
    np.mean: [S(A(3, 4)), S(A(3, 4), axis=-1, keepdims=True), S(A(3, 4), where=_SOME),
              S(A(3, 4), axis=0, where=_SOME_2D | _SOME, keepdims=True)],
    np.prod: [S(A(3, 4), axis=1), S(A(3, 4), axis=0, where=_SOME, initial=2.0)],
    np.var: [S(A(3, 4)), S(A(3, 4), axis=0, ddof=1)], np.std: [S(A(3, 4), axis=1), S(A(3, 4), ddof=1, keepdims=True)],
    np.max: [S(_DISTINCT), S(_DISTINCT, axis=1), S(_DISTINCT, axis=1, initial=0.5),
             S(_DISTINCT, where=_SOME, initial=-5.0), S(_DISTINCT, axis=0, where=_SOME_2D, initial=-1.0)],
    np.amax: [S(_DISTINCT, axis=0, keepdims=True)],
    np.min: [S(_DISTINCT, axis=-1), S(_DISTINCT, axis=0, where=_SOME_2D, initial=0.0)], np.amin: [S(_DISTINCT)],
    np.average: [S(A(3, 4)), S(A(3, 4), axis=1, weights=P(4)), S(A(3), weights=P(3))],
    np.cumsum: [S(A(3, 4)), S(A(3, 4), axis=0)], np.cumprod: [S(A(2, 3), axis=1), S(A(4))],
    np.cumulative_sum: [S(A(4)), S(A(2, 3), axis=1, include_initial=True)],
    np.cumulative_prod: [S(A(2, 3), axis=0), S(A(3), include_initial=True)],
    np.ptp: [S(_DISTINCT), S(_DISTINCT, axis=1, keepdims=True)],
    np.nansum: [S(_WITH_NAN), S(_WITH_NAN, axis=0, keepdims=True), S(_WITH_NAN, axis=1, where=_SOME, initial=1.5)],
    np.nanmean: [S(_WITH_NAN), S(_WITH_NAN, axis=1), S(_WITH_NAN, axis=0, where=_SOME_2D | _SOME)],
    np.nanmax: [S(_WITH_NAN), S(_WITH_NAN, axis=1, keepdims=True)], np.nanmin: [S(_WITH_NAN, axis=0)],
    np.nanprod: [S(_WITH_NAN), S(_WITH_NAN, axis=1), S(_WITH_NAN, where=_SOME_2D, initial=-2.0)],
    np.nancumsum: [S(_WITH_NAN), S(_WITH_NAN, axis=0)],
    np.nancumprod: [S(_WITH_NAN, axis=1)], np.nanvar: [S(_WITH_NAN), S(_WITH_NAN, axis=0, ddof=1, keepdims=True)],
    np.nanstd: [S(_WITH_NAN, axis=1), S(_WITH_NAN + 1j * _DISTINCT, axis=0)],
    np.quantile: [S(_DISTINCT, 0.3), S(_DISTINCT, [0.1, 0.5, 1.0], axis=0),
                  S(_DISTINCT, [0.2, 0.9], axis=-1, keepdims=True)],
    np.percentile: [S(_DISTINCT, 40), S(_DISTINCT, [10, 75], axis=1)],
    np.median: [S(_DISTINCT), S(_DISTINCT, axis=1), S(_DISTINCT, axis=0, keepdims=True)],
    np.cov: [S(A(3, 5)), S(A(5, 3), rowvar=False), S(A(4), A(4), bias=True), S(C(2, 4))],
    np.corrcoef: [S(A(3, 5)), S(A(5), A(5)), S(A(4, 3), rowvar=False)],
    np.trapezoid: [S(A(2, 5)), S(A(2, 5), np.sort(A(5))), S(A(3, 2), dx=0.5, axis=0),
                   S(A(2, 4), np.sort(A(2, 4), axis=1))],
    # ----- products ---------------------------------------------------------------------------------------
    np.dot: [S(A(3), A(3)), S(A(2, 3), A(3, 4)), S(A(2, 3), A(3)), S(A(2, 3), A(2, 3, 4)), S(2.0, A(3))],
    np.vdot: [S(A(2, 3), A(2, 3))], np.inner: [S(A(2, 3), A(4, 3)), S(A(3), A(3))],
    np.outer: [S(A(3), A(2, 2))], np.einsum: [S("ij,jk->ik", A(2, 3), A(3, 4)), S("ii", A(3, 3))],
    np.tensordot: [S(A(2, 3, 4), A(3, 4, 2)), S(A(2, 3), A(3, 2), axes=1), S(A(2, 3), A(2, 4), axes=(0, 0))],
    np.kron: [S(A(2, 2), A(2, 3)), S(A(3), A(2))], np.trace: [S(A(3, 3)), S(A(2, 3, 3), axis1=1, axis2=2)],
    np.cross: [S(A(2, 3), A(3)), S(A(3, 2), A(3, 2), axis=0), S(A(3, 2), A(2, 3), axisa=0, axisc=0)],
    # ----- matrices and shapes ----------------------------------------------------------------------------
    np.diag: [S(A(3)), S(A(3, 3), k=1)], np.diagonal: [S(A(3, 4), 1)], np.tril: [S(A(3, 3))],
    np.triu: [S(A(3, 3), k=-1)], np.reshape: [S(A(2, 3), (3, 2)), S(A(2, 3), -1)], np.ravel: [S(A(2, 3))],
    np.transpose: [S(A(2, 3, 4)), S(A(2, 3, 4), (1, 0, 2))], np.swapaxes: [S(A(2, 3, 4), 0, 2)],
    np.moveaxis: [S(A(2, 3, 4), 0, -1)], np.squeeze: [S(A(1, 3, 1)), S(A(1, 3, 1), axis=0)],
    np.expand_dims: [S(A(3), 0), S(A(2, 3), (0, 3))], np.broadcast_to: [S(A(3), (2, 3))],
    np.atleast_1d: [S(A())], np.atleast_2d: [S(A(3))], np.atleast_3d: [S(A(2, 3))],
    np.matrix_transpose: [S(A(2, 3, 4))],
    # ----- joining and splitting --------------------------------------------------------------------------
    np.concatenate: [S([A(2, 3), A(1, 3)]), S([A(2), A(2, 2)], axis=None)], np.stack: [S([A(3), A(3)], axis=1)],
    np.hstack: [S([A(2), A(3)]), S([A(2, 2), A(2, 1)])], np.vstack: [S([A(3), A(2, 3)])],
    np.column_stack: [S([A(3), A(3, 2)])],
    np.split: [S(A(6), 3), S(A(2, 5), [1, 3], axis=1)], np.array_split: [S(A(7), 3), S(A(3, 4), 2, axis=1)],
    np.dstack: [S([A(2, 3), A(2, 3)]), S([A(3), A(3)])], np.hsplit: [S(A(2, 4), 2), S(A(5), [2])],
    np.meshgrid: [S(A(3), A(2)), S(A(3), A(2), A(2), indexing="ij"), S(A(2), A(3), sparse=True)],
    np.vsplit: [S(A(4, 2), [1])], np.dsplit: [S(A(2, 2, 4), 2)],
    np.append: [S(A(2, 3), A(2)), S(A(2, 3), A(1, 3), axis=0)],
    # ----- selection and rearrangement --------------------------------------------------------------------
    np.where: [S(np.array([True, False, True]), A(3), A(3)), S(np.array([True, False]), A(2), 0.0)],
    np.clip: [S(np.array([0.5, -1.5, 2.5]), -1.0, 1.0), S(np.array([0.5, -1.5, 2.5]), None, 1.0)],
    np.diff: [S(A(5)), S(A(3, 4), n=2, axis=1), S(A(4), prepend=0.0, append=A(1))],
    np.gradient: [S(A(5)), S(A(3, 4), 0.5), S(A(3, 4), np.array([0.0, 0.4, 1.5]), 2.0, edge_order=2),
                  S(A(3, 4), np.sort(A(4)), axis=1), S(A(4, 2), axis=0, edge_order=2), S(A(2, 3), 0.7, axis=(1, 0))],
    np.sort: [S(_DISTINCT), S(_DISTINCT, axis=0), S(_DISTINCT, axis=None)],
    np.take: [S(A(5), np.array([0, 3, 3])), S(A(3, 4), np.array([[1, 0]]), axis=1)],
    np.take_along_axis: [S(A(3, 4), np.array([[0], [3], [1]]), axis=1)],
    np.pad: [S(A(2, 3), 1), S(A(2, 3), ((1, 0), (0, 2)), constant_values=1.5), S(A(4), 2, mode="reflect"),
             S(A(4), (1, 2), mode="edge"), S(A(3), 2, mode="wrap")],
    np.tile: [S(A(2, 3), (2, 1)), S(A(3), 2)], np.repeat: [S(A(3), 2), S(A(2, 3), [1, 2, 0], axis=1)],
    np.roll: [S(A(5), 2), S(A(2, 3), -1, axis=1)], np.flip: [S(A(2, 3)), S(A(2, 3), axis=1)],
    np.fliplr: [S(A(2, 3))], np.flipud: [S(A(2, 3))],
    np.rot90: [S(A(2, 3)), S(A(2, 3), 2), S(A(2, 3, 4), -1, (2, 0))],
    np.copy: [S(A(3))], np.astype: [S(A(3), np.float64)], np.round: [S(np.array([0.26, -1.12]), 1)],
    np.select: [S([np.array([True, False, False]), np.array([True, True, False])], [A(3), A(3)], A(3))],
    np.nan_to_num: [S(np.array([0.5, np.nan, np.inf, -np.inf])),
                    S(np.array([np.nan, 1.5, np.inf]), nan=2.0, posinf=3.0)],
    np.fix: [S(np.array([0.5, -1.5, 2.7]))],
    np.around: [S(np.array([0.2, -1.2]))],
    # ----- polynomials, interpolation, elementwise compositions ---------------------------------------------
    np.vander: [S(A(4)), S(A(3), 5, True), S(A(3), N=2)],
    np.polyval: [S(A(4), A(2, 3)), S([1.0, -2.0, 0.5], A(3))],
    np.interp: [S(np.array([-3.0, -0.4, 0.35, 0.8, 3.0]), np.array([-1.0, 0.0, 0.5, 1.5]), A(4)),
                S(np.array([0.2, 1.1]), np.array([-1.0, 0.0, 0.5, 1.5]), A(4), left=-5.0, right=A())],
    np.sinc: [S(np.array([0.0, 0.3, -1.2, 5e-4]))],
    # ----- np.fft --------------------------------------------------------------------------------------------
    np.fft.fft: [S(A(6)), S(C(5), n=7, norm="ortho"), S(A(3, 4), axis=0, n=2)],
    np.fft.ifft: [S(C(5)), S(C(2, 4), norm="forward")], np.fft.rfft: [S(A(6)), S(A(2, 5), n=8)],
    np.fft.irfft: [S(C(4)), S(C(3, 4), n=5, axis=0, norm="ortho")], np.fft.fft2: [S(A(3, 4))],
    np.fft.ifft2: [S(C(2, 3), s=(3, 2))], np.fft.fftn: [S(C(2, 3, 2)), S(A(3, 4), axes=(0,))],
    np.fft.ifftn: [S(C(3, 3), norm="ortho")], np.fft.fftshift: [S(A(5)), S(A(3, 4), axes=0)],
    np.fft.ifftshift: [S(A(3, 5))],
    # ----- 1-D convolution ---------------------------------------------------------------------------------
    np.correlate: [S(A(6), A(3)), S(A(5), A(4), "same"), S(A(2), A(4), "full"), S(C(5), C(3), "full"),
                   S(A(4), C(2), "same")],
    np.convolve: [S(A(6), A(3)), S(A(5), A(2), "same"), S(A(3), A(5), "valid"), S(C(3), C(4))],
    # ----- complex numbers ----------------------------------------------------------------------------------
    np.conjugate: [S(A(3) + 1j * A(3))], np.real: [S(A(3) + 1j * A(3))], np.imag: [S(A(2, 2) + 1j * A(2, 2)), S(A(3))],
    np.angle: [S(A(3) + 1j * A(3)), S(P(3) - 1j * P(3), deg=True)],
    # ----- linear algebra ---------------------------------------------------------------------------------
    np.linalg.norm: [S(A(3)), S(A(3, 4)), S(A(3, 4), axis=1), S(A(3, 4), 1), S(A(3, 4), "fro", keepdims=True)],
    np.linalg.solve: [S(_WELL, A(3)), S(_WELL, A(3, 2))], np.linalg.inv: [S(_WELL)], np.linalg.det: [S(_WELL)],
    np.linalg.slogdet: [S(_WELL)], np.linalg.eigh: [S(_SPD)], np.linalg.eigvalsh: [S(_SPD), S(_SPD, UPLO="U")],
    np.linalg.svd: [S(_WELL), S(_WELL, compute_uv=False)], np.linalg.qr: [S(_WELL)],
    np.linalg.cholesky: [S(_SPD), S(_SPD, upper=True)], np.linalg.pinv: [S(_WELL)],
    np.linalg.matrix_power: [S(_WELL, 0), S(_WELL, 3), S(_WELL, -2)],
    np.linalg.multi_dot: [S([A(2, 3), A(3, 3), A(3)]), S([A(3), A(3, 2), A(2, 4)])],
    np.linalg.matmul: [S(A(2, 3), A(3, 4))], np.linalg.matrix_transpose: [S(A(3, 4))],
    np.linalg.vecdot: [S(A(2, 3), A(2, 3)), S(A(3, 2), A(3, 2), axis=0)], np.linalg.outer: [S(A(3), A(2))],
    np.linalg.cross: [S(A(2, 3), A(2, 3))], np.linalg.trace: [S(A(2, 3, 3), offset=1)],
    np.linalg.diagonal: [S(A(2, 3, 4), offset=-1)], np.linalg.tensordot: [S(A(2, 3), A(3, 2), axes=1)],
    np.linalg.vector_norm: [S(A(3, 4)), S(A(3, 4), axis=1, ord=3, keepdims=True)],
    np.linalg.matrix_norm: [S(A(2, 3, 4)), S(A(3, 4), ord="nuc", keepdims=True)],
    np.linalg.svdvals: [S(A(2, 3, 4))],
    np.linalg.lstsq: [S(A(5, 3), A(5)), S(A(5, 3), A(5, 2)), S(A(2, 4), A(2))],
    np.linalg.cond: [S(_WELL), S(_WELL, -2), S(_WELL, np.inf), S(_WELL, "fro")],
}

# entry points without a derivative: the result is NumPy's own, a plain array or Python value
PLAIN: dict[Any, list[S]] = {
    np.argmax: [S(_DISTINCT, axis=1)], np.argmin: [S(_DISTINCT)], np.argsort: [S(_DISTINCT)],
    np.nonzero: [S(_DISTINCT > 0)], np.argwhere: [S(_DISTINCT > 0)], np.flatnonzero: [S(_DISTINCT)],
    np.count_nonzero: [S(_DISTINCT > 0)], np.any: [S(_DISTINCT > 0)], np.all: [S(_DISTINCT > 0, axis=0)],
    np.isclose: [S(_DISTINCT, _DISTINCT)], np.allclose: [S(_DISTINCT, _DISTINCT)],
    np.array_equal: [S(_DISTINCT, _DISTINCT)], np.shape: [S(_DISTINCT)], np.ndim: [S(_DISTINCT)],
    np.size: [S(_DISTINCT)], np.result_type: [S(_DISTINCT, 1.0)], np.searchsorted: [S(np.sort(_DISTINCT[0]), 0.5)],
    np.may_share_memory: [S(_DISTINCT, A(2))], np.shares_memory: [S(_DISTINCT, A(2))],
    np.iscomplexobj: [S(_DISTINCT)], np.isrealobj: [S(_DISTINCT)], np.linalg.matrix_rank: [S(_WELL)],
    np.nanargmax: [S(_WITH_NAN, axis=1)], np.nanargmin: [S(_WITH_NAN)],
}

# constructors from a Tensor's shape and dtype: a new Tensor that does not require grad (ready for writes)
LIKE: dict[Any, list[S]] = {
    np.zeros_like: [S(_DISTINCT)], np.ones_like: [S(_DISTINCT, dtype=np.float32)],
    np.full_like: [S(_DISTINCT, 2.5)], np.empty_like: [S(_DISTINCT)],
}
