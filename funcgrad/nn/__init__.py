"""Neural-network building blocks, as ``torch.nn``: ``Module`` with PyTorch's registration, state_dict,
train/eval and hooks; ``Parameter``; containers; layers; ``functional`` (with the losses) and ``init``.

Example:
    >>> import funcgrad as fg
    >>> from funcgrad import nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> model(fg.ones(3, 4)).shape, len(list(model.parameters()))
    ((3, 2), 4)
"""
from funcgrad.nn import functional, init
from funcgrad.nn.modules import *  # noqa: F403
from funcgrad.nn.modules import activation, container, conv, dropout, linear, loss, normalization, pooling, sparse
from funcgrad.nn.modules.module import Module
from funcgrad.nn.parameter import Buffer, Parameter

__all__ = ["Module", "Parameter", "Buffer", "functional", "init",
           *container.__all__, *linear.__all__, *conv.__all__, *pooling.__all__, *activation.__all__,
           *dropout.__all__, *normalization.__all__, *sparse.__all__, *loss.__all__]
