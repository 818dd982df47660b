"""Tools to verify derivatives: ``gradcheck``, ``gradgradcheck``, ``check_function`` and their reports.

The hypothesis helpers are in ``funcgrad.check.strategies`` and ``funcgrad.check.properties`` (imported on demand,
since hypothesis is a test dependency); the command line is ``python -m funcgrad check``.
"""
from funcgrad.check.contract import check_function
from funcgrad.check.gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "check_function"]
