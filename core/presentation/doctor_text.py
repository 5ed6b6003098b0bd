"""``bin/connect doctor``'s text: one line a check (its verdict, its subject, what was found and,
after `` -- ``, what to do), then one line counting what fails and what warns."""

from __future__ import annotations

from collections.abc import Sequence

from core.doctor import Check, CheckStatus


def lines(checks: Sequence[Check]) -> list[str]:
    width = max((len(check.name) for check in checks), default=0)
    shown = [f"{check.status:<7}  {check.name:<{width}}  {check.detail}"
             + (f" -- {check.advice}" if check.advice else "") for check in checks]
    return [*shown, summary(checks)]


def summary(checks: Sequence[Check]) -> str:
    failing = sum(check.status == CheckStatus.failing for check in checks)
    warnings = sum(check.status == CheckStatus.warning for check in checks)
    warned = f"{warnings} warning{'s' if warnings != 1 else ''}"
    if failing:
        return f"doctor: {failing} failing, {warned}"
    return f"doctor: nothing failing ({len(checks)} checks, {warned})"
