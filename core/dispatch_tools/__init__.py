"""A worker's dispatch tools: the instruction it pulls, and the decisions of its four tools.

``get_dispatch``, ``ack_dispatch``, ``complete_dispatch`` and ``reply_dispatch`` are bound to the
one task the worker's token names. The shell opens one immediate transaction per call, re-checks
the token, reads the task's live rows and asks the functions here what to answer and write.

Rule 1: the instruction is an allowlist (``Instruction``): no route, no feed position, no token.

Rule 2: ``get_dispatch`` serves the event named, or the earliest live row admitted or exposed
whose record is servable (``dispatched``, or ``completed`` after this worker pulled it).
Finished work is never handed out for the first time.

Rule 3: serving writes before anything leaves the call: ``exposed``, the first ``pulled_at``, the
guard canceled with its pending intent. A repeat writes nothing and answers the same. Under a
hold a first exposure or pull is refused.

Rule 4: a worker reports only on rows of its own task (``not_on_task``) that it pulled
(``not_exposed``). A repeat answers the same receipt; a different report is ``report_conflict``.

Rule 5: ``complete_dispatch`` reports an outcome, an optional reply id and bounded http(s) links
(``invalid_report`` otherwise, checked after the token and the pull), and acknowledges. A
reported outcome stands.

Rule 6: every refusal is a ``ToolRefusal`` a worker may read; anything else is
``LEDGER_FAILURE``, its detail kept out of the model's transcript.

Rule 7: the agent's own mentions are stripped by the tag walk that reads mentions (``core.mentions``).

Rule 8: a worker's words (``core.worker_words``) are written once, with the move they report: an
acknowledgement's with ``exposed -> delivered`` (none once the guard fired or when asked for
none), a reply with the completion, a note before it (at most ``MAX_NOTES`` an event). Words or
an id (``text``/``ack_id``, ``reply``/``reply_id``), never both: ids serve a worker that posts itself.
"""
