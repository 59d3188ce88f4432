"""The kernel: what tfcli, infra and the trainer share, at the bottom of every layer.

- ``spec/``: the spec models and their reader, the one place a spec file is parsed; ``configs/``: the bundled
  library its names resolve from;
- ``errors``: the one exception type (and its exit codes' meaning);
- ``files``: atomic writes; ``state``: a run's counters; ``scores`` and ``budget``: the rules that read them;
- ``config_keys``: the stack-config keys the CLI writes and the Pulumi program reads.

It imports none of tfcli, infra or the rest of the trainer (import-linter's ``top-level-layers`` and
``kernel-at-the-bottom``). It lives inside ``trainer/`` because the trainer's image must carry it and the project
keeps its top-level layout; ``trainer/__init__.py`` stays empty so importing the kernel runs nothing else.
"""
