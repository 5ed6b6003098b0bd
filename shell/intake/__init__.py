"""Intake: the events the agent may be asked about, heard by two lanes, recorded once each.

``poll_lane`` reads the account's event feed and alone moves its position; ``live_lane`` hears
the same events over a WebSocket and records them by the poll lane's own path; ``repair`` walks
the feed again for what the live lane lost; ``backlog`` pauses both lanes while admission is
behind; ``membership`` re-reads the agent's projects so the live lane subscribes to a new one.
Each module states its own rules.
"""
