"""The repository's own ``envs``: the repository root is a tfcli project too (``tfcli.yaml``), where the README's
quick start and the bundled ``gridworld-ppo`` (``entry_point: envs.gridworld:GridWorld``) run.

In a project ``tfcli init`` writes ``envs/`` from the template ``tfcli/scaffold/envs/``. Here that template itself
is the package's folder, so the repository keeps no copy that could drift from what users get: modules are looked
up there too (``__path__``), and the template's ``__init__`` registers ``GridWorld-v0`` as a project's does. It
finds the template in the installed tfcli, so it works wherever the trainer runs (on GKE, shipped as the project's
code folder, the image's tfcli has the template).
"""

import importlib
import os

import tfcli

__path__.append(os.path.join(os.path.dirname(tfcli.__file__), "scaffold", "envs"))
importlib.import_module("tfcli.scaffold.envs")  # registers GridWorld-v0 (entry point envs.gridworld:GridWorld)
