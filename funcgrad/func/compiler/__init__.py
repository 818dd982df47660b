"""``funcgrad.func.jit``'s machinery: record a function's array work once per signature (``tracing``), keep
it as a ``program`` of kernel calls with its guards, and replay it (``compiled``)."""
from funcgrad.func.compiler.compiled import jit

__all__ = ["jit"]
