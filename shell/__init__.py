"""The imperative shell: SQLite, HTTP, processes, signals and the command line."""
