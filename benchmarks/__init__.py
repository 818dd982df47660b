"""Benchmarks of funcgrad against hand-written NumPy, torch and HIPS autograd; run ``python -m benchmarks``.

``WORKLOADS`` lists every workload in table order; a new family of workloads is a module with its own
``WORKLOADS`` list, added here.
"""
from benchmarks.harness import Workload
from benchmarks.workloads import WORKLOADS as FIRST_ORDER
from benchmarks.workloads_check import WORKLOADS as CHECKS
from benchmarks.workloads_functional import WORKLOADS as TRANSFORMS
from benchmarks.workloads_higher import WORKLOADS as HIGHER_ORDER
from benchmarks.workloads_nn import WORKLOADS as NN
from benchmarks.workloads_numpy import WORKLOADS as NUMPY_CODE
from benchmarks.workloads_sparse import WORKLOADS as SPARSE

WORKLOADS: list[Workload] = [*FIRST_ORDER, *NUMPY_CODE, *NN, *TRANSFORMS, *HIGHER_ORDER, *SPARSE, *CHECKS]
