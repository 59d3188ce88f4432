"""What Pulumi runs (``Pulumi.yaml``: ``main: infra/``): the tfcli stack program."""

import pulumi

from infra.program import run
from trainer.kernel.errors import TfcliError

try:
    run()
except TfcliError as error:
    # A mistake in stack config: Pulumi prints a RunError's message without a traceback.
    raise pulumi.RunError("\n".join(error.lines())) from None
