"""Fixtures of the trainer tests (the helpers themselves are in ``trainer_testkit``)."""

from trainer_testkit import spec_file

__all__ = ["spec_file"]
