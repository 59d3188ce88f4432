"""tfcli: TensorForce experiments on this machine or on GKE, declared as Pulumi stacks."""

__version__ = "0.1.0"
