"""Layers, activations and losses as functions, as ``torch.nn.functional``.

Convolution and pooling run on the op table's ``convolution``/``max_pool``/... entries; everything else
is composed of table ops, so gradients of every order, forward mode and the transforms apply.

Example:
    >>> import funcgrad as fg
    >>> from funcgrad.nn import functional as F
    >>> logits = fg.tensor([[2.0, 0.5, -1.0]], requires_grad=True)
    >>> loss = F.cross_entropy(logits, fg.tensor([0]))
    >>> round(loss.item(), 4)
    0.2413
"""
from funcgrad.nn._functional_conv import *  # noqa: F403
from funcgrad.nn._functional_conv import __all__ as _conv_all
from funcgrad.nn._functional_layers import *  # noqa: F403
from funcgrad.nn._functional_layers import __all__ as _layers_all
from funcgrad.nn._functional_loss import *  # noqa: F403
from funcgrad.nn._functional_loss import __all__ as _loss_all

__all__ = [*_conv_all, *_layers_all, *_loss_all]
