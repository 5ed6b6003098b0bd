"""Numbered SQL migrations, applied in order. A shipped file is never edited."""
