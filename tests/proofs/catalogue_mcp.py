"""The MCP server's start imports only what its initialize answer needs
(what a tool call, a file that is not a ledger or another command needs is imported where it is
used). The token hand-off's own entries are in ``tests.proofs.catalogue_world``. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

START = "test_the_servers_start_to_its_initialize_answer_imports_none_of_what_it_needs_later"

MCP: list[Mutation] = [
    rule(
        "mcp start: argparse's help width is read without shutil",
        "    def _get_formatter(self) -> argparse.HelpFormatter:\n",
        "    def _unused_formatter(self) -> argparse.HelpFormatter:\n",
        START,
    ),
    rule(
        "mcp start: a message's text imports html only when it reads one",
        "import re\nimport unicodedata\n\n_BREAK",
        "import html\nimport re\nimport unicodedata\n\n_BREAK",
        START,
    ),
    rule(
        "mcp start: a file's kind reads a token file's text only for a file that is not a ledger",
        "from core.json_input import json_or_none\n\nHEAD_BYTES",
        "from core.json_input import json_or_none\nfrom core.oauth import read_token_text\n\nHEAD_BYTES",
        START,
    ),
    rule(
        "mcp start: the worker's calls read the state vocabularies without the lifecycle tables",
        "from core.states import DeliveryState, EventOutcome, GuardState, RecordState\nfrom core.task_token",
        "from core.edges import DeliveryState, GuardState, RecordState\nfrom core.states import EventOutcome\n"
        "from core.task_token",
        START,
        "test_the_server_imports_only_what_its_tools_use",
    ),
    rule(
        "mcp start: the tools' list reads the delivery states without the lifecycle tables",
        "from core.states import DeliveryState\n\nif TYPE_CHECKING:",
        "from core.edges import DeliveryState\n\nif TYPE_CHECKING:",
        START,
        "test_the_server_imports_only_what_its_tools_use",
    ),
]

FIRST_CALL = "test_the_tools_list_imports_none_of_what_the_first_tool_call_needs"

MCP += [
    rule(
        "mcp start: the worker's calls import core's decisions at the first tool call",
        "from shell.log_format import ids\n\nif TYPE_CHECKING:\n    from core.dispatch_tools.decisions import (\n",
        "from shell.log_format import ids\nfrom core.dispatch_tools.decisions import decide_get\n\n"
        "if TYPE_CHECKING:\n    from core.dispatch_tools.decisions import (\n",
        START,
        FIRST_CALL,
    ),
    rule(
        "mcp start: the worker's calls import the worker's moves at the first write",
        "from core.task_token import token_sha256\nfrom shell.ledger.connection import Ledger\n",
        "from core.task_token import token_sha256\nfrom shell.ledger import worker_moves\n"
        "from shell.ledger.connection import Ledger\n",
        START,
        FIRST_CALL,
    ),
    rule(
        "mcp start: the worker's calls name the tools' classes for type checking only",
        "\nif TYPE_CHECKING:\n    from core.dispatch_tools.decisions import (\n        Acknowledge,\n",
        "\nif True:\n    from core.dispatch_tools.decisions import (\n        Acknowledge,\n",
        START,
        FIRST_CALL,
    ),
    rule(
        "mcp start: the server reads a tool's arguments and receipts at its first call",
        "if TYPE_CHECKING:\n    from core.dispatch_tools.decisions import AckRequest, CompleteRequest, GetRequest, ReplyRequest\n"
        "    from core.dispatch_tools.instruction import DeliveryReceipt\n    from shell.ledger.worker_calls import Dispatched\n",
        "if True:\n    from core.dispatch_tools.decisions import AckRequest, CompleteRequest, GetRequest, ReplyRequest\n"
        "    from core.dispatch_tools.instruction import DeliveryReceipt\n    from shell.ledger.worker_calls import Dispatched\n",
        START,
        FIRST_CALL,
    ),
    rule(
        "mcp start: tools/list's schemas read their bounds from plain data, not from core's decisions",
        "from core import dispatch_tools as bounds\n",
        "from core.dispatch_tools.decisions import MAX_LINK_LENGTH\nfrom core import dispatch_tools as bounds\n",
        START,
        FIRST_CALL,
    ),
    rule(
        "mcp start: only a probe token's start imports the probe's tools",
        "from shell.worker.mcp import McpServer, serve\n\nTOKEN_ENV",
        "from shell.worker.mcp import McpServer, serve\nfrom shell.doctor.handshake import serve_probe\n\nTOKEN_ENV",
        START,
    ),
]
