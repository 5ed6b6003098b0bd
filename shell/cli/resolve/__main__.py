"""``python -m shell.cli.resolve``: ``bin/outbox-resolve``."""

import sys

from shell.cli.streams import guard

guard()  # the standard streams made safe first (shell.cli.streams rule 1)

from shell.cli.resolve.entry import main  # noqa: E402

sys.exit(main())
