"""The Pulumi side of tfcli: components (one per file), the manifest builder and the stack program.

- ``cluster.py`` (GkeCluster), ``node_pools.py`` (NodePools), ``results_bucket.py`` (ResultsBucket),
  ``workloads.py`` (Workloads): ComponentResources with typed args; they never read stack config.
- ``manifests.py``: the one function that turns an Experiment into Kubernetes objects (deployed and rendered);
  ``sweep_manifests.py`` a sweep's; ``sizing.py`` every size they and the program use.
- ``config_keys.py``: the stack-config keys; ``stack_config.py``: the only reader of stack config; ``program.py``
  and ``sweep_program.py`` wire the components (through ``run_stack.py``); ``__main__.py`` is what Pulumi runs
  (``Pulumi.yaml`` has ``main: infra/``).
- ``image_program.py``, ``trainer_images.py``, ``image_build.py``, ``cloud_build.py``, ``image_context.py``: the
  image stack — the trainer built by Cloud Build from a deterministic build context; ``image_progress.py``: a build's
  progress line; ``image_choice.py``: which image a run's pods pull.
- ``plan.py``: the program evaluated offline under Pulumi's mocks, with a cost estimate from ``prices.py``.
- ``stack_files.py``: the shape of ``stacks/Pulumi.<stack>.yaml`` and the committed examples.

Importing this package imports nothing heavy; Pulumi is imported by the modules that need it.
"""
