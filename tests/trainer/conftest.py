"""Fixtures of the trainer tests (the helpers themselves are in ``trainer_testkit``)."""

from trainer_testkit import copy_of_finished_run, finished_run, spec_file

__all__ = ["copy_of_finished_run", "finished_run", "spec_file"]
