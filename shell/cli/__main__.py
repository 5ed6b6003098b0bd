"""``python -m shell.cli.main``: ``bin/connect``."""

import sys

from shell.cli.main import main

sys.exit(main())
