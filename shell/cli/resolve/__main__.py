"""``python -m shell.cli.resolve``: ``bin/outbox-resolve``."""

import sys

from shell.cli.streams import guard

guard()  # the standard streams made safe first (rule 1 of shell.cli.streams)

from shell.cli.resolve.entry import main  # noqa: E402

sys.exit(main())
