"""Intake: the events the agent may be asked about, heard by three lanes, recorded once each.

``poll_lane`` reads the account's event feed and alone moves its position; it also holds the
backlog pause and the repair of what the live lane lost. ``live_lane`` hears the same events over
a WebSocket, and re-reads the agent's projects to subscribe to a new one. ``inbox_lane`` reads
what was addressed to the agent, a backstop to both."""
