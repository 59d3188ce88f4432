"""Sweeps: one experiment spec x a grid (or a random sample) of settings x seeds, run and compared as one unit."""
