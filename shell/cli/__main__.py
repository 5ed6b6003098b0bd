"""``python -m shell.cli``: ``bin/connect``. ``run``'s signal handler comes first, before any
import that takes time (``shell.cli.start_signals``); then the standard streams are made safe (for
``run``, each written by a thread of its own: a reader that stalls never holds its stop)."""

import sys

from shell.cli.start_signals import runs, take_early

take_early(sys.argv[1:])

from shell.cli.seam import guard  # noqa: E402  (after the handler, which comes first)

guard(spooled=runs(sys.argv[1:]))

from shell.cli.main import main  # noqa: E402

sys.exit(main())
