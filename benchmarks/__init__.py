"""Benchmarks of funcgrad against hand-written NumPy, torch and HIPS autograd; run ``python -m benchmarks``.

``WORKLOADS`` lists every workload in table order; a new family of workloads is a module with its own
``WORKLOADS`` list, added here.
"""
from benchmarks.harness import Workload
from benchmarks.workloads import WORKLOADS as FIRST_ORDER

WORKLOADS: list[Workload] = [*FIRST_ORDER]
