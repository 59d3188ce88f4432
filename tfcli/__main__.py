"""``python -m tfcli`` runs the CLI (the same as the ``tfcli`` command)."""

from tfcli.cli.app import main

main()
