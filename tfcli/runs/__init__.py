"""Runs: an experiment or a sweep as one handle (:class:`Run`), and the :class:`Backend` interface that starts, pauses,
resumes, stops, watches and downloads it. The backends (``tfcli.local``, ``tfcli.gke``) implement it; only
``tfcli.backends`` picks one. docs/design.md §2 draws the layers.
"""
