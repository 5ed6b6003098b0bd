"""The command line: one entry, one error seam, a module for each concern."""
