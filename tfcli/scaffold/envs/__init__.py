"""This project's own environments (tfcli ships this folder to GKE runs; `code:` in tfcli.yaml names others).

An experiment names a class by entry point, ``environment: {entry_point: "envs.gridworld:GridWorld"}``, or a level
this package registers with gymnasium, ``environment: {level: "envs:GridWorld-v0"}`` (gymnasium's ``module:id``).
"""

import gymnasium

if "GridWorld-v0" not in gymnasium.registry:  # imported again (a reload): registered already
    gymnasium.register(id="GridWorld-v0", entry_point="envs.gridworld:GridWorld", max_episode_steps=50)
