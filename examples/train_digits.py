"""Train the seeds' conv net on scikit-learn's handwritten digits (8×8 images, no download) with funcgrad.

The network is the MNIST ``Net`` of the seeds sized for 8×8 inputs (conv 1→20, max-pool, conv 20→50,
max-pool, linear, linear, log_softmax + nll_loss), trained with ``SGD(momentum=0.9)`` in float32.
Module hooks print the shapes that flow through ``conv1``, ``conv2`` and ``fc2`` once, as the seed does,
and a tqdm progress bar (when tqdm is installed) shows the loss and the training accuracy.

Run: ``pip install -e ".[examples]" && python examples/train_digits.py``
"""
from __future__ import annotations

import argparse
import os
import time
from typing import Any

# The matrices here are small: one BLAS thread is fastest, and several spin and wait on a busy machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import funcgrad as fg  # noqa: E402
from funcgrad import nn, optim  # noqa: E402
from funcgrad.nn import functional as F  # noqa: E402

try:
    from tqdm import tqdm
except ImportError:  # the progress bar is optional
    tqdm = None


class Net(nn.Module):
    """The seeds' MNIST net for 1×8×8 digits: two 3×3 convolutions (padding 1), each followed by
    ReLU and 2×2 max pooling, then two linear layers and log_softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 20, 3, 1, padding=1)
        self.conv2 = nn.Conv2d(20, 50, 3, 1, padding=1)
        self.fc1 = nn.Linear(2 * 2 * 50, 500)
        self.fc2 = nn.Linear(500, 10)

    def forward(self, x: Any) -> Any:
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(x, 2, 2)
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2, 2)
        x = x.view(-1, 2 * 2 * 50)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def print_shapes_once(model: Net, say: Any = print) -> None:
    """Forward hooks on conv1/conv2/fc2 and a full backward hook on fc2 that print what flows through them
    the first time, then remove themselves."""
    handles: dict[str, Any] = {}

    def forward_hook(module: nn.Module, inputs: tuple[Any, ...], output: Any) -> None:
        name = next(n for n, m in model.named_children() if m is module)
        say(f"  {name:5s} {type(module).__name__:6s} input {tuple(inputs[0].shape)} -> output {tuple(output.shape)}")
        handles.pop(name).remove()

    def backward_hook(module: nn.Module, grad_input: tuple[Any, ...], grad_output: tuple[Any, ...]) -> None:
        say(f"  fc2 backward: grad_input {[tuple(g.shape) for g in grad_input if g is not None]}, "
            f"grad_output {[tuple(g.shape) for g in grad_output]}")
        handles.pop("fc2 backward").remove()

    for name in ("conv1", "conv2", "fc2"):
        handles[name] = getattr(model, name).register_forward_hook(forward_hook)
    handles["fc2 backward"] = model.fc2.register_full_backward_hook(backward_hook)


def load(train_size: int | None, seed: int) -> tuple[np.ndarray, ...]:
    """The digits as float32 (N, 1, 8, 8) images in [0, 1] and int64 labels, split 75% / 25% (stratified)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    x_train, x_test, y_train, y_test = train_test_split(images, digits.target.astype(np.int64), test_size=0.25,
                                                        random_state=seed, stratify=digits.target)
    if train_size is not None:
        x_train, y_train = x_train[:train_size], y_train[:train_size]
    return x_train, x_test, y_train, y_test


def accuracy(model: Net, x: np.ndarray, y: np.ndarray) -> float:
    """The fraction of ``x`` classified as ``y`` (eval mode, no graph)."""
    model.eval()
    with fg.no_grad():
        predicted = model(fg.tensor(x)).data.argmax(axis=1)
    model.train()
    return float((predicted == y).mean())


def train(epochs: int = 15, batch_size: int = 16, lr: float = 0.03, train_size: int | None = None,
          max_steps: int | None = None, seed: int = 0, verbose: bool = True) -> dict[str, Any]:
    """Train the net and return ``{"losses": per-step losses, "test_accuracy": ..., "seconds": ...}``.

    ``train_size`` and ``max_steps`` shorten the run (the test uses them).
    """
    say = print if verbose else (lambda *_: None)
    fg.manual_seed(seed)
    x_train, x_test, y_train, y_test = load(train_size, seed)
    model = Net().float()
    optimizer = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    say(model)
    say("shapes through the hooked layers (once):")
    print_shapes_once(model, say)
    rng = np.random.default_rng(seed)
    losses: list[float] = []
    start = time.perf_counter()
    bar = tqdm(range(epochs), desc="epochs", disable=not verbose) if tqdm is not None else range(epochs)
    for epoch in bar:
        order = rng.permutation(len(x_train))
        correct = 0
        for first in range(0, len(order), batch_size):
            batch = order[first:first + batch_size]
            optimizer.zero_grad()
            output = model(fg.tensor(x_train[batch]))
            loss = F.nll_loss(output, fg.tensor(y_train[batch]))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            correct += int((output.data.argmax(axis=1) == y_train[batch]).sum())
            if max_steps is not None and len(losses) >= max_steps:
                break
        scheduler.step()
        train_accuracy = correct / min(len(order), len(losses) * batch_size)
        if tqdm is not None and verbose:
            bar.set_postfix(loss=f"{np.mean(losses[-10:]):.4f}", acc=f"{train_accuracy:.3f}")
        elif verbose:
            say(f"epoch {epoch + 1}: loss {np.mean(losses[-10:]):.4f}, training accuracy {train_accuracy:.3f}")
        if max_steps is not None and len(losses) >= max_steps:
            break
    seconds = time.perf_counter() - start
    test_accuracy = accuracy(model, x_test, y_test)
    say(f"test accuracy {test_accuracy:.2%} on {len(x_test)} images after {seconds:.1f} s of training")
    return {"losses": losses, "test_accuracy": test_accuracy, "seconds": seconds}


def main() -> None:
    """Parse the command line and train."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.03)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train(args.epochs, args.batch_size, args.lr, seed=args.seed)


if __name__ == "__main__":
    main()
