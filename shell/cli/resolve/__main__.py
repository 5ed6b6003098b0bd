"""``python -m shell.cli.resolve``: ``bin/outbox-resolve``."""

import sys

from shell.cli.resolve.entry import main

sys.exit(main())
