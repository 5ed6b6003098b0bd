"""Basecamp: the HTTP client, the reads admission makes, and the stand-in."""
