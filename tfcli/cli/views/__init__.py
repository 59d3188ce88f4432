"""How the CLI shows the library's results: rich text, tables and progress bars, nothing else."""
