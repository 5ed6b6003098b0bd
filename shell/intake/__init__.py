"""Intake: the events the agent may be asked about, heard by three lanes (the account's feed, a
WebSocket, the agent's inbox) and recorded once each."""
