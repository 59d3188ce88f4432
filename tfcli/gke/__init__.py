"""The GKE backend: experiments as Pulumi stacks, driven through the Automation API, results in GCS."""
