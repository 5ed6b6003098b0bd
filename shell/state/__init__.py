"""A connector's state directory: its configuration and its instance lock."""
