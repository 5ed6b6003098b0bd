"""The proofs of tokens that outlive two weeks: the token file's two forms
(``core.oauth``), refreshing before expiry and once on a 401 (``shell.basecamp.tokens``, the
client), the new pair kept, never two refreshes at once, ``bin/connect login``, and the
stand-in's Launchpad. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

TOKENS: list[Mutation] = [
    rule(
        "token: a bare token file keeps working",
        '    if not stripped.startswith("{"):\n',
        "    if False:\n",
        "test_a_bare_token_stays_a_bare_token",
    ),
    rule(
        "token: no secret of the login's credentials is in their repr",
        "    access_token: str = field(repr=False)\n",
        "    access_token: str\n",
        "test_no_secret_is_in_the_repr",
    ),
    rule(
        "token: a refresh answer without a refresh token keeps the old one",
        "refresh_token=(refresh or previous.refresh_token).strip(),",
        'refresh_token=(refresh or "").strip(),',
        "test_a_refresh_answer_without_a_refresh_token_keeps_the_old_one",
    ),
    rule(
        "token: a login's token is refreshed before it expires",
        "            if refresh_due(self._credentials, self._clock.now()):\n",
        "            if False:\n",
        "test_a_token_due_for_refresh_is_refreshed_and_the_new_pair_is_kept_owner_only",
        "test_the_connector_runs_across_token_expiries_with_nothing_lost_or_doubled",
    ),
    rule(
        "token: the refreshed pair is kept in the token file",
        "            private_files.write_atomically(self._path, to_text(fresh).encode(), FileKind.token)\n",
        "",
        "test_a_token_due_for_refresh_is_refreshed_and_the_new_pair_is_kept_owner_only",
        "test_the_connector_runs_across_token_expiries_with_nothing_lost_or_doubled",
    ),
    rule(
        "token: a read refused 401 is asked once more after one refresh",
        "            if answer.status == 401 and not replayed and self._tokens.after_unauthorized(token) is not None:\n",
        "            if False:\n",
        "test_a_401_is_answered_by_one_refresh_and_the_request_once_more",
        "test_the_connector_runs_across_token_expiries_with_nothing_lost_or_doubled",
    ),
    rule(
        "token: a create refused 401 is made once more after one refresh",
        "        if isinstance(outcome, Refused) and outcome.status == 401:  # nothing was created\n",
        "        if False:\n",
        "test_a_create_refused_401_is_made_once_more_after_the_refresh_and_lands_once",
    ),
    rule(
        "token: a 401 for a token already replaced does not refresh again",
        "            if self._credentials.access_token != used:\n                return self._credentials.access_token\n",
        "",
        "test_never_two_refreshes_in_parallel",
    ),
    rule(
        "token: a refresh adopts what another process refreshed",
        "            if base.access_token != self._credentials.access_token and not refresh_due(base, now):\n",
        "            if False:\n",
        "test_never_two_refreshes_in_parallel",
    ),
    rule(
        "token: login keeps the token file owner-only",
        "    private_files.write_atomically(token_file, oauth.to_text(credentials).encode(), FileKind.token)\n",
        "    token_file.write_text(oauth.to_text(credentials))\n",
        "test_login_obtains_a_token_by_the_loopback_redirect_and_keeps_it_owner_only",
    ),
    rule(
        "token: login asks for the client secret before anything",
        '    if not secret or any(character.isspace() for character in secret):\n',
        "    if False:\n",
        "test_without_a_client_secret_nothing_is_asked_or_written",
    ),
    rule(
        "token: the stand-in's issued access tokens expire",
        "            if issued is None or issued.expires_at <= self._now():\n",
        "            if issued is None:\n",
        "test_a_401_is_answered_by_one_refresh_and_the_request_once_more",
    ),
    rule(
        "token: login's device flow only where the server's discovery offers it",
        "    if endpoint is None:\n        raise UserError(\n",
        "    if False:\n        raise UserError(\n",
        "test_the_device_flow_is_refused_where_the_server_does_not_offer_it",
    ),
    rule(
        "token: a device sign-in still pending is polled again",
        '    if error == "authorization_pending":\n        return interval\n',
        '    if error == "authorization_pending":\n        return None\n',
        "test_the_device_flow_where_the_server_offers_it",
    ),
    rule(
        "admission: a record blocked by a 401 is retried without end, not for a day",
        "RETRIED_WITHOUT_END = frozenset({BlockedReason.config_unreadable, BlockedReason.read_unauthorized})",
        "RETRIED_WITHOUT_END = frozenset({BlockedReason.config_unreadable})",
        "test_a_record_blocked_by_a_refused_token_is_timed_without_end",
    ),
    rule(
        "admission: a read answered 401 is the token's refusal, not the record's",
        "        if answer.status == 401:\n            raise _Failed(ReadFailure(ReadFailureKind.unauthorized))\n",
        "",
        "test_a_refused_read_ends_at_once_as_its_failure_kind",
    ),
]
