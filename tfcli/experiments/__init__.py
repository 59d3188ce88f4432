"""Experiments of a project: their folders, their specs and what their runs are doing."""
