"""Persistence: one SQLite database (WAL) behind small repositories."""
