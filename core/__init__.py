"""The functional core: pure functions from ledger snapshots to decisions.

Rule: nothing in this package performs I/O. No sqlite3, urllib3, subprocess, os, socket,
threading, logging, random or time import; the clock and ids arrive as arguments.
"""
