"""Tools to verify derivatives: ``gradcheck``, ``gradgradcheck`` and their reports."""
from funcgrad.check.gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]
