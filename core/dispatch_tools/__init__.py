"""A worker's dispatch tools: the instruction it pulls, and the decisions of its four tools.

A worker the connector started talks to the ledger through four tools, bound to the one task
its token names: ``get_dispatch``, ``ack_dispatch``, ``complete_dispatch`` and
``reply_dispatch`` (the last three carry the worker's words, which the connector posts). The shell opens
one immediate transaction per call, re-checks the token in it, reads the task's live rows
(``DispatchRow``) and asks the functions here what to answer and what to write. Values in,
decisions out; nothing here reads a clock, a file or the ledger.

One concern a module: ``rows`` (what the ledger hands in; servable), ``instruction`` (the
instruction and the receipt), ``arguments`` (the tools' arguments, shapes only),
``decisions`` (the three decisions), ``refusals`` (what a refusal says). The mention walk of
rule 7 is ``core.mentions``, which admission reads too.

Rule 1: the instruction is an allowlist. ``Instruction`` names every field a worker is handed:
the event, its trigger, the recording, where to reply, who asked, whether to acknowledge,
whether the connector's guard already acknowledged, the delivery, and the content admission
read with the agent's own mention stripped. No route, no feed position, no token.

Rule 2: ``get_dispatch`` serves the event it is asked for, or, when none is named, the earliest
live row at delivery ``admitted`` or ``exposed`` whose record is servable. A record is servable
while it carries its instruction (a readable snapshot) and is ``dispatched``, or ``completed``
after this worker pulled it: finished work is never handed out for the first time. A row never
pulled is served only while it is admitted or exposed.

Rule 3: serving writes, before anything leaves the call: ``exposed`` if the row was
``admitted``; the first ``pulled_at``; the guard ``armed -> canceled`` (the outbox's trigger
cancels the pending guard intent in the same transaction). A repeat writes nothing and
answers the same instruction. Under a hold, a first exposure or a first pull is refused.

Rule 4: a worker reports only what it pulled (``not_exposed`` otherwise) and only on its own
task's live rows (``not_on_task``). ``ack_dispatch`` moves ``exposed -> delivered`` and writes
the worker's ack id with that move or never: a repeat with the same id (or none) answers the
same receipt; an id that differs from the recorded one, or arrives after an acknowledgement
made without one, is a second report and refused (``report_conflict``).

Rule 5: ``complete_dispatch`` reports ``succeeded`` or ``failed``, an optional reply id and at
most ``MAX_LINKS`` http(s) links of at most ``MAX_LINK_LENGTH`` characters (``invalid_report``
otherwise, checked after the token and the pull). It also acknowledges: the row moves to
``completed`` from ``exposed`` or ``delivered``, and a ``dispatched`` record to ``completed``.
The same report again answers the same receipt; a different one is refused: a reported
outcome stands.

Rule 6: every refusal is a ``Refusal`` whose kind and message a worker may read. Anything else
that goes wrong is the ledger's fault, not the worker's: it is answered with ``LEDGER_FAILURE``
and its detail stays out of the model's transcript.

Rule 8: a worker's words (``ack_dispatch``'s ``text``, ``complete_dispatch``'s ``reply``,
``reply_dispatch``'s ``text``) are decided by ``core.worker_words``: where they go, their body,
their key and bounds. They are written with the move they report, once: an acknowledgement in
words only with ``exposed -> delivered`` (a repeat in the same words answers the same receipt,
other words are a second acknowledgement, refused), and none when the guard already fired or the
trigger asked for none; a reply with the completion; a note before completion, once per text, at
most ``MAX_NOTES`` per event. ``text`` and ``ack_id``, ``reply`` and ``reply_id``, are one or
the other: the ids stay for a worker that posts with tools of its own.

Rule 7: the agent's own mentions are stripped from the content by the same tag walk that reads
who is mentioned; ``core.mentions`` holds the walk and its rules.
"""
