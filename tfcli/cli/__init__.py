"""The ``tfcli`` command line. Modules here import only typer and rich at start-up (docs/design.md §13.9)."""
