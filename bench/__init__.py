"""Benchmarks that print a table; run each as a module from the repository root: ``uv run python -m bench.NAME``.

As modules they import the project's packages from the root; run as scripts (``python bench/x.py``), this folder
would come first on the import path and ``bench/trainer.py`` would shadow the ``trainer`` package.
"""
