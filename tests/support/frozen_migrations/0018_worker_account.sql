-- Migration 18: what a worker said of its own end, kept on its attempt (`bin/connect status`).
--
-- not_started:  why a worker that existed never began its work, as its own output proves it
--               (Claude Code's init was not what was asked, it could not reach its model, it ended
--               without pulling); '' otherwise. An attempt with a reason here is spawn_failed too.
-- worker_result: 1 when the worker wrote a result (Claude Code's `result` message), else 0; the
--               columns after it are that result: its error (bounded, no secrets; '' when it was
--               no error), turns, cost in US dollars, duration in milliseconds, and the tools it
--               was refused, by name, comma-separated (their count is migration 2's `refusals`).
ALTER TABLE attempts ADD COLUMN not_started TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN worker_result INTEGER NOT NULL DEFAULT 0
    CHECK (worker_result = 0 OR worker_result = 1);
ALTER TABLE attempts ADD COLUMN result_is_error INTEGER NOT NULL DEFAULT 0
    CHECK (result_is_error = 0 OR result_is_error = 1);
ALTER TABLE attempts ADD COLUMN result_error TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN result_turns INTEGER NOT NULL DEFAULT 0 CHECK (result_turns >= 0);
ALTER TABLE attempts ADD COLUMN result_cost_usd REAL NOT NULL DEFAULT 0 CHECK (result_cost_usd >= 0);
ALTER TABLE attempts ADD COLUMN result_duration_ms INTEGER NOT NULL DEFAULT 0 CHECK (result_duration_ms >= 0);
ALTER TABLE attempts ADD COLUMN denied_tools TEXT NOT NULL DEFAULT '';
