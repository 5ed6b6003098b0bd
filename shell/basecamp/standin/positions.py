"""Signed, opaque positions: what the stand-in's event feed and inbox hand clients to resume from.

Rules:
1. A position is base64url (unpadded) of compact JSON, a dot, and the HMAC-SHA256 of that JSON
   under a secret of its own signer (made fresh for each feed or inbox): a client can neither
   build nor alter one, and one lane's position is never another's.
2. ``read`` answers the fields of a position this signer minted, or None for anything else (not
   base64, not signed here, not a JSON object): the caller answers that 400 ``invalid_position``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from typing import Any


class PositionSigner:
    """Mints and reads positions under one secret (rules 1 and 2)."""

    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)

    def _sign(self, payload: bytes) -> str:
        return hmac.new(self._secret, payload, hashlib.sha256).hexdigest()

    def mint(self, fields: Mapping[str, int | str]) -> str:
        payload = json.dumps(dict(fields), separators=(",", ":")).encode()
        encoded = base64.urlsafe_b64encode(payload).decode().rstrip("=")
        return f"{encoded}.{self._sign(payload)}"

    def read(self, token: str) -> dict[str, Any] | None:
        encoded, _, signature = token.partition(".")
        try:
            payload = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        except (binascii.Error, ValueError):
            return None
        if not hmac.compare_digest(self._sign(payload), signature):
            return None
        try:
            fields = json.loads(payload)
        except ValueError:
            return None
        return fields if isinstance(fields, dict) else None
