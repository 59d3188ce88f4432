"""The ``tfcli`` command line. Modules here import only typer and rich at start-up (DESIGN.md §5.8)."""
