"""The derivative table, one module per family of ops."""
