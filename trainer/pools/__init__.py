"""Environment pools: the N environments one training run steps together (docs/design.md §5).

``single`` is a pool of one, ``multi-threaded`` a pool of ``num_workers`` (in-process or in subprocesses) and
``distributed`` a pool of ``num_workers`` remote env-worker processes; the training loop sees only
:class:`~trainer.pools.base.EnvironmentPool`.
"""
