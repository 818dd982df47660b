"""``python -m funcgrad``: a short tour (a gradient, a third derivative) or a subcommand."""
from __future__ import annotations

import sys

import numpy as np

import funcgrad as fg


def tour() -> None:
    """Print a gradient and a third derivative computed through ``create_graph``."""
    x = fg.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = (fg.sin(x) * x ** 2).sum()  # type: ignore[attr-defined]
    y.backward()
    print("f(x) = sum(sin(x) * x**2) at x =", x.data)
    print("  df/dx         =", x.grad.data)
    print("  by hand       =", np.cos(x.data) * x.data ** 2 + 2 * x.data * np.sin(x.data))

    t = fg.tensor(0.7, requires_grad=True)
    (d1,) = fg.autograd.grad(fg.exp(t * t), t, create_graph=True)  # type: ignore[attr-defined]
    (d2,) = fg.autograd.grad(d1, t, create_graph=True)  # type: ignore[arg-type]
    (d3,) = fg.autograd.grad(d2, t)  # type: ignore[arg-type]
    print("g(t) = exp(t**2) at t = 0.7")
    print("  g'''(t)       =", d3.item())
    print("  by hand       =", float((12 * 0.7 + 8 * 0.7 ** 3) * np.exp(0.49)))


def main(argv: list[str]) -> int:
    """Run the tour (no arguments) or ``check`` (see ``funcgrad.check.cli``)."""
    if argv and argv[0] == "check":
        from funcgrad.check.cli import main as check_main  # hypothesis is needed only here

        return check_main(argv[1:])
    if argv:
        print(f"unknown command {argv[0]!r}; run `python -m funcgrad` for the tour", file=sys.stderr)
        return 2
    tour()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
