"""Derivatives of linalg ops. Names as in elementwise.py."""
