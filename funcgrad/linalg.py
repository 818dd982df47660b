"""Linear algebra with gradients, under torch.linalg's names: ``funcgrad.linalg.inv`` and so on.

The differentiable ops are the ``linalg_*`` entries of the op table (funcgrad/ops/derivatives/linalg.py);
this module renames them and adds the norms torch builds from them (``matrix_norm``, ``norm``, in
funcgrad/ops/linalg_norms.py) and torch's options (``upper``, ``UPLO``, ``left``, ``mode``, in
funcgrad/ops/linalg_options.py). Each function takes a matrix or a stack of matrices ``(*, m, n)``;
decompositions return plain tuples. The module holds its public names only.

Example:
    >>> import funcgrad as fg
    >>> A = fg.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> fg.linalg.det(A).backward()
    >>> A.grad  # det(A) * inv(A)^T
    tensor([[ 3., -1.],
            [-1.,  2.]])
"""
from funcgrad.ops.derivatives.linalg import LinAlgError
from funcgrad.ops.derivatives.linalg import linalg_det as det
from funcgrad.ops.derivatives.linalg import linalg_inv as inv
from funcgrad.ops.derivatives.linalg import linalg_pinv as pinv
from funcgrad.ops.derivatives.linalg import linalg_slogdet as slogdet
from funcgrad.ops.derivatives.linalg import linalg_svdvals as svdvals
from funcgrad.ops.derivatives.linalg import linalg_vector_norm as vector_norm
from funcgrad.ops.linalg_norms import matrix_norm, norm
from funcgrad.ops.linalg_options import cholesky, cross, eigh, eigvalsh, qr, solve, svd

__all__ = ["LinAlgError", "inv", "det", "slogdet", "solve", "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals",
           "pinv", "vector_norm", "matrix_norm", "norm", "cross"]
