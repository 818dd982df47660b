"""Optimizers and learning-rate schedules, as ``torch.optim``.

Example:
    >>> import funcgrad as fg
    >>> from funcgrad import nn, optim
    >>> model = nn.Linear(2, 1)
    >>> opt = optim.Adam(model.parameters(), lr=0.1)
    >>> loss = ((model(fg.ones(4, 2)) - 1.0) ** 2).mean()
    >>> opt.zero_grad(); loss.backward(); opt.step()
"""
from funcgrad.optim import lr_scheduler
from funcgrad.optim.adam import Adam, AdamW
from funcgrad.optim.optimizer import Optimizer
from funcgrad.optim.rmsprop import Adagrad, RMSprop
from funcgrad.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
