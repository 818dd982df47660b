"""Time every workload for funcgrad, hand-written NumPy, torch and HIPS autograd, side by side.

Usage::

    python -m benchmarks                        # all workloads, 15 interleaved rounds each
    python -m benchmarks --only mlp tiny-chain  # some workloads
    python -m benchmarks --repeat 31            # more rounds: steadier medians on a busy machine
    python -m benchmarks --quick                # 3 rounds, short samples: a check that it all runs
    python -m benchmarks --gc-off               # the collector paused during samples (by default it runs)
    python -m benchmarks --only mlp --profile funcgrad  # cProfile's top costs instead of timings
    OPENBLAS_NUM_THREADS=1 python -m benchmarks  # NumPy's BLAS and torch on one thread each

torch gets as many threads as NumPy's BLAS: one per CPU unless ``OPENBLAS_NUM_THREADS`` or
``OMP_NUM_THREADS`` says otherwise (pin both to 1 for steadier numbers on a busy machine).
torch and autograd rows appear when those packages are installed (``pip install -e ".[bench]"``).
Every variant's gradient is checked against the NumPy one before anything is timed. Each row gives the
median seconds per forward+backward call, the interquartile range, the per-op time where the workload
counts its ops, and funcgrad's median divided by that row's; the targets follow, with PASS or MISS.
"""
from __future__ import annotations

import argparse
import platform
import sys

import numpy as np

from benchmarks import WORKLOADS
from benchmarks.frameworks import installed, match_threads
from benchmarks.harness import profile, run, table, target_report


def _versions() -> str:
    found = [f"python {platform.python_version()}", f"numpy {np.__version__}"]
    for module in ("torch", "autograd"):
        if installed(module):
            from importlib.metadata import version

            found.append(f"{module} {version(module)}")
        else:
            found.append(f"{module}: not installed (column skipped)")
    return ", ".join(found)


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the chosen workloads, print the table and the targets."""
    names = [wl.name for wl in WORKLOADS]
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=names, metavar="NAME", help=f"among {', '.join(names)}")
    parser.add_argument("--repeat", type=int, default=15, help="interleaved rounds per workload (default 15)")
    parser.add_argument("--quick", action="store_true", help="3 rounds of short samples (overrides --repeat)")
    parser.add_argument("--profile", metavar="VARIANT", help="print cProfile's top costs of this variant instead")
    parser.add_argument("--gc-off", action="store_true",
                        help="pause the garbage collector during each sample (by default it runs, as in a user's loop)")
    args = parser.parse_args(argv)
    chosen = [wl for wl in WORKLOADS if not args.only or wl.name in args.only]
    if args.profile:
        for wl in chosen:
            print(profile(wl, args.profile))
        return 0
    repeat, min_sample = (3, 0.001) if args.quick else (args.repeat, 0.01)

    print(_versions())
    print(match_threads())
    collector = "paused during each sample (--gc-off)" if args.gc_off else "running, as in a user's loop"
    print(f"timing: time.perf_counter; gc.freeze() after set-up, gc.collect() before each sample, the collector "
          f"{collector}; warm-up first; {repeat} rounds, order rotated each round (JAX's rows in rounds of their own "
          "after the others': interleaved, they slow the rows timed after them); "
          f"each sample ≥ {min_sample * 1e3:g} ms")
    results = run(chosen, repeat, min_sample, gc_off=args.gc_off)
    print()
    print(table(results))
    print()
    print(target_report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
