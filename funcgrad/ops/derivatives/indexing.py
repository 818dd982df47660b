"""Derivatives of indexing ops. Names as in elementwise.py."""
