"""The command line: one entry, one error seam, one module a subcommand."""
