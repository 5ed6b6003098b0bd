"""A worker steered to leak: it reads the agent's token file, as a worker running as the connector's
user can, and hands the token to ``reply_dispatch`` in each listed encoding, then completes with a
plain reply. What each call answered is written, one JSON line each, to ``--said``."""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from pathlib import Path

from shell.demo.worker import McpClient

ENCODINGS = {
    "as is": lambda token: token,
    "base64": lambda token: base64.b64encode(token.encode()).decode(),
    "url-encoded": lambda token: "".join(f"%{byte:02x}" for byte in token.encode()),
    "hex": lambda token: token.encode().hex(),
}


def main() -> int:
    parser = argparse.ArgumentParser()
    for option in ("--mcp-config", "--token-file", "--said"):
        parser.add_argument(option, required=True)
    args = parser.parse_args()
    token = Path(args.token_file).read_text().strip()
    (server,) = json.loads(Path(args.mcp_config).read_text())["mcpServers"].values()
    tools = McpClient([server["command"], *server.get("args", [])], {**os.environ, **server.get("env", {})})
    with Path(args.said).open("a") as said:
        instruction = tools.call("get_dispatch")["instruction"]
        event_id = instruction["event_id"]
        for name, encode in ENCODINGS.items():
            try:
                answer: object = tools.call("reply_dispatch", event_id=event_id, text=f"The token: {encode(token)}")
            except RuntimeError as refused:
                answer = str(refused)
            said.write(json.dumps({"encoding": name, "answer": answer}) + "\n")
        tools.call("complete_dispatch", event_id=event_id, outcome="succeeded", reply="Nothing to share.")
    tools.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
