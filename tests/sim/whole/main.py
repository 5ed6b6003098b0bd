"""``bin/simulate``: seeded runs of the whole connector, replayable from their seed.

    bin/simulate --seeds 300 --jobs 2      # seeds 0..299; coverage; last line: simulate: seeds=300 violations=0
    bin/simulate --seed 17                 # replay one run, printing its history step by step
    bin/simulate --mutants --seeds 200     # each injected bug must be found within 200 seeds

Rules:
1. Each seed is one run (``tests.sim.whole.run.Run``) of ``--steps`` steps. A violation prints
   the seed, the step, the check's name, and a one-line replay command; replaying that seed
   fails the same way at the same step.
2. Coverage: how often each path in ``REQUIRED`` (and every other counted path) was reached is
   printed; with ``--seeds`` of at least ``COVERAGE_FLOOR``, a required path never reached fails
   the run.
3. The last line is always ``simulate: seeds=N violations=V``. Exit codes: 0 clean; 1 a violation,
   an unreached path or a mutant not found; 2 bad arguments.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import multiprocessing
import sys
import time
from collections import Counter
from collections.abc import Sequence

from tests.sim.whole.run import Run, Violation, template_ledger

COVERAGE_FLOOR = 100
# Counted, not required: "claim: a resent guard canceled, its instruction pulled and
# unacknowledged" (the one path that finds the mutant "claim: a guard a worker canceled by
# get_dispatch is canceled"): reached in 1 seed of the first 400 (seed 92); requiring it in CI's
# 200 seeds would hang on that one seed's history.
REQUIRED = (
    "inbox: recorded an event no other lane had",  # tests.sim.whole.inbox
    "intent adopted by reconciliation",
    "intent sending -> indeterminate",
    "intent sending -> canceled (refused)",
    "person: resend canceled",
    "guard armed, then canceled by get_dispatch",
    "intent pending -> canceled",
    "crash: after the claim",
    "crash: after the message was stored",
    "crash: during a listing",
    "crash: after the launch was committed",
    "recovery: ended a worker left running",
    "recovery: attempt held for a person",
    "person: redispatch done",
    "person: discard done",
    "person: sent indeterminate",
    "still-running tick",
    "attempt ended: deadline",
    "stopped and started",
    "person: hold set",
    "person: hold released",
    "dispatch under a hold",
    "post rate_limited",
    "outbox ran during a 429's Retry-After",
    "live: overflow",
    "repair: found an event the live lane lost",
    "feed 410: the epoch passed",
    "410: an event expired unread, inside a recorded gap",
    # what the world once missed
    "admitted: assigned",
    "admitted: subscribed",
    "admitted: completed",
    "guard: due its delay after the verdict",
    "reconciliation gave up after ten failed listings",
    "adopted reply: a worker's",
    "stop: the flush met a slow Basecamp",
    "stop: settled the workers it supervised",  # the connector's own stop (tests.sim.whole.rules)
    "guard: sent once its delay passed",  # tests.sim.whole.guards
    "guard: told rows say it never went out (abandoned)",
    "guard: told rows say it never went out (canceled)",
    "429: Retry-After above the first backoff",
    "429: Retry-After below the first backoff",
    "a worker's word fails to connect as its worker finishes",  # tests.sim.whole.words
    "token outage: over a day",  # tests.sim.whole.token_outage
    "token outage: a create answered 401",
    "token outage: the first create after it met a blip",
)


def run_seed(seed: int, steps: int, history: bool = False) -> tuple[Counter[str], tuple[int, int, str, str] | None]:
    coverage: Counter[str] = Counter()
    run = Run(seed, steps, coverage)
    try:
        run.play()
    except Violation as violation:
        if history:
            print("\n".join(violation.history))
        return coverage, (seed, violation.step, violation.check, violation.detail)
    if history:
        print("\n".join(run.history))
    return coverage, None


def _job(arguments: tuple[int, int]) -> tuple[Counter[str], tuple[int, int, str, str] | None, float]:
    logging.disable(logging.WARNING)  # errors reach the run (tests.sim.whole.connector's Failures)
    began = time.process_time()
    coverage, violation = run_seed(*arguments)
    return coverage, violation, time.process_time() - began


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bin/simulate",
        description="Seeded, replayable runs of the whole connector (real core and ledger) against "
        "a simulated clock, Basecamp, workers and person, with crashes; named checks after every step.",
        epilog="examples:\n  bin/simulate --seeds 300 --jobs 2\n  bin/simulate --seed 17\n"
        "  bin/simulate --mutants --seeds 200 --jobs 2\n"
        "exit codes: 0 clean; 1 a violation, an unreached path or a mutant not found; 2 bad arguments",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seed", type=int, help="replay this one seed, printing its history")
    parser.add_argument("--seeds", type=int, default=100, help="how many seeds (default 100)")
    parser.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    parser.add_argument("--steps", type=int, default=200, help="steps a run (default 200)")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--stop-at-first", action="store_true", help="stop at the first violation")
    parser.add_argument("--mutants", action="store_true", help="inject each known bug in a copy; each must be found")
    parser.add_argument("--only", default="", help="with --mutants: only those whose name holds this text")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout instead of the report")
    arguments = parser.parse_args(argv)
    if arguments.seeds < 1 or arguments.steps < 1 or arguments.jobs < 1:
        parser.error("--seeds, --steps and --jobs are positive")
    return arguments


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parse(sys.argv[1:] if argv is None else argv)
    logging.disable(logging.WARNING)  # errors reach the run (tests.sim.whole.connector's Failures)
    if arguments.mutants:
        from tests.sim.whole.mutants import run_mutants

        return run_mutants(arguments.seeds, arguments.steps, arguments.jobs, arguments.only)
    if arguments.seed is not None:
        coverage, violation = run_seed(arguments.seed, arguments.steps, history=not arguments.json)
        return _report([arguments.seed], coverage, [violation] if violation else [], (0.0, 0.0), arguments, False)
    seeds = list(range(arguments.first, arguments.first + arguments.seeds))
    began = time.monotonic()
    coverage: Counter[str] = Counter()
    violations: list[tuple[int, int, str, str]] = []
    done: list[int] = []
    work = [(seed, arguments.steps) for seed in seeds]
    template_ledger()  # made once, before any fork: the children share it, this process removes it
    gc.freeze()  # the imports' objects live as long as the process: no full collection walks them again
    if arguments.jobs == 1:
        results = map(_job, work)
    else:
        pool = multiprocessing.get_context("fork").Pool(arguments.jobs)
        results = pool.imap(_job, work, chunksize=4)
    cpu = 0.0
    for (seed, _), (counted, violation, seconds) in zip(work, results, strict=False):
        done.append(seed)
        cpu += seconds
        coverage.update(counted)
        if violation is not None:
            violations.append(violation)
            if arguments.stop_at_first:
                break
    if arguments.jobs > 1:
        pool.terminate()
    elapsed = time.monotonic() - began
    return _report(done, coverage, violations, (elapsed, cpu), arguments, len(done) >= COVERAGE_FLOOR)


def _report(  # noqa: PLR0917 -- one report's parts
    seeds: list[int], coverage: Counter[str], violations: list[tuple[int, int, str, str]],
            times: tuple[float, float], arguments: argparse.Namespace, require: bool) -> int:
    elapsed, cpu = times
    unreached = [path for path in REQUIRED if coverage[path] == 0] if require else []
    if arguments.json:
        print(json.dumps({
            "seeds": len(seeds), "violations": [
                {"seed": s, "step": st, "check": c, "detail": d, "replay": f"bin/simulate --seed {s}"}
                for s, st, c, d in violations],
            "unreached": unreached, "coverage": dict(sorted(coverage.items())),
            "runs_per_second": round(len(seeds) / elapsed, 2) if elapsed else None,
            "runs_per_cpu_second": round(len(seeds) / cpu, 2) if cpu else None,
        }))
    else:
        print("coverage (times each path was reached):")
        for path, count in sorted(coverage.items()):
            print(f"  {count:7d}  {path}{'  (required)' if path in REQUIRED else ''}")
        for path in unreached:
            print(f"  {0:7d}  {path}  (required: NEVER REACHED)")
        for seed, step, check, detail in violations:
            print(f"VIOLATION seed {seed} step {step}: {check}: {detail}")
            print(f"  replay: bin/simulate --seed {seed} --steps {arguments.steps}")
        if elapsed:
            print(f"{len(seeds)} runs of {arguments.steps} steps in {elapsed:.1f} s: "
                  f"{len(seeds) / elapsed:.2f} runs per second ({arguments.jobs} jobs), "
                  f"{len(seeds) / max(cpu, 1e-9):.2f} runs per CPU-second")
        print(f"simulate: seeds={len(seeds)} violations={len(violations)}")
    return 1 if violations or unreached else 0


if __name__ == "__main__":
    sys.exit(main())
