"""JAX-style function transforms in torch.func's namespace: NumPy (or Tensor) pytrees in and out.

Example:
    >>> import numpy as np
    >>> import funcgrad.func as ff
    >>> ff.grad(lambda x: (x ** 2).sum())(np.array([1.0, 2.0]))
    array([2., 4.])
"""
from funcgrad.func.compiler import jit
from funcgrad.func.jet import directional_derivative, jet, nth_derivative
from funcgrad.func.sparse import sparse_hessian, sparse_jacobian
from funcgrad.func.sparsity import hessian_sparsity, jacobian_sparsity
from funcgrad.func.stateless import functional_call
from funcgrad.func.transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad, vjp

__all__ = ["grad", "value_and_grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize", "jit",
           "jet", "nth_derivative", "directional_derivative", "functional_call", "jacobian_sparsity",
           "hessian_sparsity", "sparse_jacobian", "sparse_hessian"]
