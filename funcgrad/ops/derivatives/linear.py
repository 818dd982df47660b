"""Derivatives of linear ops. Names as in elementwise.py."""
