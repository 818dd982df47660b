"""The training example, shortened: a few hundred digits, sixty steps; the loss must fall, and the
hooks must print the shapes at conv1, conv2 and fc2 once."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "train_digits.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_training_on_digits_lowers_the_loss(capsys: pytest.CaptureFixture[str]) -> None:
    example = _load_example()
    result = example.train(epochs=4, train_size=300, max_steps=60, lr=0.1, seed=0, verbose=True)
    losses = result["losses"]
    assert len(losses) == 60
    assert np.mean(losses[-6:]) < 0.6 * np.mean(losses[:6])  # from about log(10) = 2.3
    assert result["test_accuracy"] > 0.5  # far above chance (0.1) after 60 small steps
    printed = capsys.readouterr().out
    assert "conv1 Conv2d input (16, 1, 8, 8) -> output (16, 20, 8, 8)" in printed
    assert "conv2 Conv2d input (16, 20, 4, 4) -> output (16, 50, 4, 4)" in printed
    assert "fc2   Linear input (16, 500) -> output (16, 10)" in printed
    assert "fc2 backward: grad_input [(16, 500)], grad_output [(16, 10)]" in printed
    assert printed.count("conv1 Conv2d") == 1  # the hooks removed themselves
