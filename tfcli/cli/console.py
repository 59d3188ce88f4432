"""The one rich console for results (stdout) and one for messages and errors (stderr)."""

from __future__ import annotations

from rich.console import Console

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
