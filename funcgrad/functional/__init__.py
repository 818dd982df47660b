"""PyTorch's ``torch.autograd.functional`` on funcgrad Tensors: vjp, jvp, jacobian, hessian, hvp, vhp.

Example:
    >>> import funcgrad as fg
    >>> import funcgrad.functional as F
    >>> F.jacobian(lambda x: x.sum(), fg.tensor([1.0, 2.0]))
    tensor([1., 1.])
"""
from funcgrad.functional.torch_style import hessian, hvp, jacobian, jvp, vhp, vjp

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]
