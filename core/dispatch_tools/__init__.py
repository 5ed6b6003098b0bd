"""A worker's dispatch tools: the instruction it pulls, and the decisions of its four tools.

A worker talks to the ledger through ``get_dispatch``, ``ack_dispatch``, ``complete_dispatch``
and ``reply_dispatch``, bound to the one task its token names. The shell opens one immediate
transaction per call, re-checks the token in it, reads the task's live rows and asks the
functions here what to answer and what to write: values in, decisions out.

Rule 1: the instruction is an allowlist (``Instruction`` names every field a worker is handed):
no route, no feed position, no token.

Rule 2: ``get_dispatch`` serves the event named, or the earliest live row admitted or exposed
whose record is servable: it carries its instruction and is ``dispatched``, or ``completed``
after this worker pulled it. Finished work is never handed out for the first time.

Rule 3: serving writes before anything leaves the call: ``exposed``, the first ``pulled_at``, and
the guard canceled (its pending intent with it, in the same transaction). A repeat writes
nothing and answers the same instruction. Under a hold a first exposure or pull is refused.

Rule 4: a worker reports only on rows of its own task (``not_on_task``) that it pulled
(``not_exposed``). An acknowledgement's id is written with its move or never; a repeat answers
the same receipt, a different report is refused (``report_conflict``).

Rule 5: ``complete_dispatch`` reports an outcome, an optional reply id and bounded http(s) links
(``invalid_report`` otherwise, checked after the token and the pull); it also acknowledges. A
reported outcome stands: the same report answers the same receipt, another is refused.

Rule 6: every refusal is a ``ToolRefusal`` a worker may read; anything else is the ledger's fault,
answered with ``LEDGER_FAILURE``, its detail kept out of the model's transcript.

Rule 7: the agent's own mentions are stripped from the content by the tag walk that reads who
is mentioned (``core.mentions``).

Rule 8: a worker's words are decided by ``core.worker_words`` and written once, with the move
they report: an acknowledgement's words with ``exposed -> delivered`` (none once the guard fired
or when the trigger asked for none), a reply with the completion, a note before completion (at
most ``MAX_NOTES`` an event). Words and an id (``text``/``ack_id``, ``reply``/``reply_id``) are
one or the other: the ids serve a worker that posts with tools of its own.
"""
