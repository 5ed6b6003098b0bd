-- Migration 14: every CHECK that names a list of three or more values names them as comparisons
-- joined by OR: the same rule, and no temporary b-tree at each write.
--
-- SQLite evaluates `x IN ('a', 'b', 'c')` (a list of more than two constants) by building a
-- temporary b-tree of the list, once in every statement that evaluates it: every INSERT into these
-- tables and every UPDATE that sets one of these columns built one or three, each a page cleared
-- and filled (about 4% of the simulation's instructions). `(x = 'a' OR x = 'b' OR x = 'c')` is the
-- same test, NULL included (NULL, which a CHECK lets pass, either way), and costs a few comparisons.
--
-- SQLite cannot ALTER a CHECK; a CHECK rewritten into an equivalent one changes nothing in the
-- file's pages, so the table's text is replaced in place, as SQLite's documentation prescribes for
-- changing CHECK constraints (lang_altertable.html, "other kinds of table schema changes"): with
-- writable_schema, in this migration's one transaction, then RESET (off, and the schema read again
-- by this connection). Each text is replaced only where it stands exactly as the migrations wrote
-- it; a ledger whose text differs keeps its IN list, the same rule. A connection opened before
-- this one keeps the old text until it next reads the schema: the same rule too.
PRAGMA writable_schema = ON;
UPDATE sqlite_master SET sql = replace(sql,
    'state IN (''seen'', ''admitted'', ''queued'',
                           ''blocked'', ''dispatched'', ''completed'', ''discarded'', ''held'')',
    '(state = ''seen'' OR state = ''admitted'' OR state = ''queued'' OR state = ''blocked'' OR state = ''dispatched'' OR state = ''completed'' OR state = ''discarded'' OR state = ''held'')')
 WHERE type = 'table' AND name = 'events';
UPDATE sqlite_master SET sql = replace(sql,
    'reply_kind IN ('''', ''comment'', ''chat_line'')',
    '(reply_kind = '''' OR reply_kind = ''comment'' OR reply_kind = ''chat_line'')')
 WHERE type = 'table' AND name = 'events';
UPDATE sqlite_master SET sql = replace(sql,
    'lane IN (''poll'', ''live'', ''repair'')',
    '(lane = ''poll'' OR lane = ''live'' OR lane = ''repair'')')
 WHERE type = 'table' AND name = 'events';
UPDATE sqlite_master SET sql = replace(sql,
    'state IN (''launching'', ''running'', ''ended'')',
    '(state = ''launching'' OR state = ''running'' OR state = ''ended'')')
 WHERE type = 'table' AND name = 'attempts';
UPDATE sqlite_master SET sql = replace(sql,
    'stop_reason IN ('''', ''finished'',
                        ''failed'', ''deadline'', ''shutdown'', ''lost'')',
    '(stop_reason = '''' OR stop_reason = ''finished'' OR stop_reason = ''failed'' OR stop_reason = ''deadline'' OR stop_reason = ''shutdown'' OR stop_reason = ''lost'')')
 WHERE type = 'table' AND name = 'attempts';
UPDATE sqlite_master SET sql = replace(sql,
    'settled_as IN ('''', ''ran'', ''did_not_run'')',
    '(settled_as = '''' OR settled_as = ''ran'' OR settled_as = ''did_not_run'')')
 WHERE type = 'table' AND name = 'attempts';
UPDATE sqlite_master SET sql = replace(sql,
    'delivery IN (''admitted'', ''exposed'', ''delivered'', ''completed'')',
    '(delivery = ''admitted'' OR delivery = ''exposed'' OR delivery = ''delivered'' OR delivery = ''completed'')')
 WHERE type = 'table' AND name = 'task_events';
UPDATE sqlite_master SET sql = replace(sql,
    'guard IN ('''', ''armed'', ''canceled'', ''fired'')',
    '(guard = '''' OR guard = ''armed'' OR guard = ''canceled'' OR guard = ''fired'')')
 WHERE type = 'table' AND name = 'task_events';
UPDATE sqlite_master SET sql = replace(sql,
    'outcome IN ('''', ''succeeded'', ''failed'', ''unknown'')',
    '(outcome = '''' OR outcome = ''succeeded'' OR outcome = ''failed'' OR outcome = ''unknown'')')
 WHERE type = 'table' AND name = 'task_events';
UPDATE sqlite_master SET sql = replace(sql,
    'kind IN (''guard_ack'', ''holding_reply'',
                           ''still_running'', ''completion'')',
    '(kind = ''guard_ack'' OR kind = ''holding_reply'' OR kind = ''still_running'' OR kind = ''completion'')')
 WHERE type = 'table' AND name = 'outbox';
UPDATE sqlite_master SET sql = replace(sql,
    'state IN (''pending'',
                           ''sending'', ''sent'', ''indeterminate'', ''canceled'', ''abandoned'')',
    '(state = ''pending'' OR state = ''sending'' OR state = ''sent'' OR state = ''indeterminate'' OR state = ''canceled'' OR state = ''abandoned'')')
 WHERE type = 'table' AND name = 'outbox';
UPDATE sqlite_master SET sql = replace(sql,
    'message_kind IN (''boost'', ''comment'', ''chat_line'')',
    '(message_kind = ''boost'' OR message_kind = ''comment'' OR message_kind = ''chat_line'')')
 WHERE type = 'table' AND name = 'outbox';
UPDATE sqlite_master SET sql = replace(sql,
    'state IN (''connecting'', ''connected'', ''down'')',
    '(state = ''connecting'' OR state = ''connected'' OR state = ''down'')')
 WHERE type = 'table' AND name = 'live_lane';
UPDATE sqlite_master SET sql = replace(sql,
    'state IN (''open'', ''repaired'', ''unrecovered'')',
    '(state = ''open'' OR state = ''repaired'' OR state = ''unrecovered'')')
 WHERE type = 'table' AND name = 'losses';
PRAGMA writable_schema = RESET;
