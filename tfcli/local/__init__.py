"""The local backend: experiments as processes on this machine (no cloud account needed)."""
