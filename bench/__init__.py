"""Benchmarks (``make bench``): reproducible scenarios against the loopback fakes."""
