"""A refusal Basecamp will repeat: an answer to the identity request that no retry can change,
and what a person must fix for it.

Rules:
1. ``lasting`` is every 4xx but 401 (the token refused: refreshed once, then a login; its own
   words elsewhere) and those a later try can pass: 408 (timeout), 409 (conflict), 423
   (locked), 425 (too early), 429 (rate limit). 431 (headers too large), 413, 414, 400, 403,
   404, 410 and the rest are lasting: a supervisor restarting on them would restart forever.
2. ``what_to_fix`` says, for one lasting status, what to change and where: the token file (431,
   413, 414, 400), the account (403, 404, 410), else all three; it never names the token.
3. Pure: a status and names in, a line out.
"""

from __future__ import annotations

PASSING_4XX = frozenset({401, 408, 409, 423, 425, 429})
_TOO_LARGE = frozenset({413, 414, 431})


def lasting(status: int) -> bool:
    """Rule 1."""
    return 400 <= status < 500 and status not in PASSING_4XX


def what_to_fix(status: int, *, token_file: str, account_id: int, base_url: str) -> str:
    """Rule 2: one line, naming the file or the setting to change."""
    if status in _TOO_LARGE:
        return (
            f"the request is too large for Basecamp (HTTP {status}): the token file {token_file} holds "
            "far more than a token; put the agent's token alone in it, or run bin/connect login again"
        )
    if status == 400:
        return (
            f"Basecamp refused the request as malformed (HTTP 400): check that {token_file} holds the "
            f"agent's token alone, and the base URL {base_url} (bin/connect setup --base-url)"
        )
    if status == 403:
        return (
            f"the token's person may not use account {account_id} (HTTP 403): check the account id "
            "(bin/connect setup --account) and that the agent is a member of that account"
        )
    if status in (404, 410):
        return (
            f"no account {account_id} at {base_url} (HTTP {status}): check the account id and the "
            "base URL (bin/connect setup --account, --base-url)"
        )
    return (
        f"Basecamp refused the request with HTTP {status}, which no retry changes: check the base URL "
        f"{base_url}, the account {account_id} and the token file {token_file} (bin/connect setup)"
    )
