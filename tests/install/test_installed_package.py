"""The connector installed like a tool: the wheel built from this tree, installed with its runtime
dependencies in a fresh virtual environment outside the clone, and ``basecamp-connect`` run from
there with the clone nowhere on any path -- the demo, the stand-in and the MCP server, each from the
installed package alone."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.dispatch_prompt import MCP_SERVER_NAME
from core.task_token import PROBE_PREFIX, TASK_TOKEN_ENV

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("installed package")]
REPOSITORY = Path(__file__).resolve().parents[2]
SOURCES = ("core", "shell", "pyproject.toml", "README.md")  # what the wheel is built from
CLEARED = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "CONNECTOR_PAUSE_AT")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "install-test", "version": "1"}}}  # fmt: skip


@dataclass(frozen=True)
class Installed:
    venv: Path
    outside: Path  # a working directory outside the clone
    environment: dict[str, str]  # the caller's, without a PYTHONPATH or an active environment

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def command(self) -> Path:
        return self.venv / "bin" / "basecamp-connect"

    def run(self, *argv: str | Path, timeout: float = 30,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(part) for part in argv], cwd=self.outside, env=env or self.environment,
                              capture_output=True, text=True, timeout=timeout, check=False)

    def inspect(self, code: str) -> dict[str, object]:
        """What the installed interpreter says of itself, as JSON printed by ``code``."""
        done = self.run(self.python, "-c", code)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]


def _pip(*argv: str | Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q",
                           *map(str, argv)], capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, f"pip {' '.join(map(str, argv))} failed:\n{done.stdout}\n{done.stderr}"


def _wheel(directory: Path) -> Path:
    """The wheel of this tree, built from a copy of its sources (so no build leaves a file here)."""
    source = directory / "source"
    source.mkdir()
    for name in SOURCES:
        if (REPOSITORY / name).is_dir():
            shutil.copytree(REPOSITORY / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPOSITORY / name, source / name)
    _pip("wheel", "--no-deps", "-w", directory / "dist", source)
    (wheel,) = (directory / "dist").glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    directory = tmp_path_factory.mktemp("installed")
    assert not directory.resolve().is_relative_to(REPOSITORY)
    wheel = _wheel(directory)
    venv = directory / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    _pip("--python", venv / "bin" / "python", "install", wheel)  # its dependencies from the indexes
    outside = directory / "elsewhere"
    outside.mkdir()
    environment = {key: value for key, value in os.environ.items() if key not in CLEARED}
    return Installed(venv, outside, environment)


def test_the_installed_demo_passes_outside_the_clone(installed: Installed) -> None:
    done = installed.run(installed.command, "demo", timeout=110)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("-- PASS"), done.stdout


def test_the_installed_interpreter_imports_the_package_from_its_own_site_packages(
    installed: Installed,
) -> None:
    found = installed.inspect(
        "import json, sys, sysconfig, core, shell, shell.ledger.migrations as m; print(json.dumps("
        "{'path': sys.path, 'site': sysconfig.get_paths()['purelib'], 'modules': [core.__file__, "
        "shell.__file__, m.__file__]}))")
    site = Path(str(found["site"])).resolve()
    assert site.is_relative_to(installed.venv.resolve())
    for entry in map(str, found["path"]):  # type: ignore[call-overload]
        assert not (installed.outside / entry).resolve().is_relative_to(REPOSITORY), entry  # "": its cwd
    for module in map(Path, found["modules"]):  # type: ignore[call-overload]
        assert module.resolve().is_relative_to(site), module


def test_the_installed_command_is_named_as_installed(installed: Installed) -> None:
    helped = installed.run(installed.command, "--help")
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: basecamp-connect "), helped.stdout
    assert "Run `basecamp-connect COMMAND --help`" in helped.stdout
    version = installed.run(installed.command, "--version")
    assert version.stdout.strip() == "basecamp-connect 0.1.0"


def test_the_installed_standin_serves_its_world(installed: Installed) -> None:
    with subprocess.Popen([str(installed.command), "standin", "--json"], cwd=installed.outside,
                          env=installed.environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as standin:  # fmt: skip
        try:
            assert standin.stdout is not None
            summary = json.loads(standin.stdout.readline())
            request = urllib.request.Request(f"{summary['account_url']}/projects.json", headers={
                "Authorization": f"Bearer {summary['token']}", "User-Agent": "install test (t@example.com)"})
            with urllib.request.urlopen(request, timeout=10) as answer:
                projects = json.load(answer)
        finally:
            standin.terminate()
            standin.wait(10)
    assert [project["id"] for project in projects] == [project["id"] for project in summary["projects"]]


def _handshake(argv: list[str], environment: dict[str, str], cwd: Path) -> dict[str, object]:
    done = subprocess.run(argv, input=json.dumps(INITIALIZE) + "\n", cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.stdout, done.stderr
    answer: dict[str, object] = json.loads(done.stdout.splitlines()[0])
    assert answer.get("id") == 1, answer
    assert "result" in answer, answer
    return answer


def test_the_installed_mcp_command_answers_the_handshake(installed: Installed) -> None:
    environment = {**installed.environment, TASK_TOKEN_ENV: PROBE_PREFIX + secrets.token_hex(16)}
    ledger = installed.outside / "ledger.sqlite3"
    _handshake([str(installed.command), "mcp", "--ledger", str(ledger)], environment, installed.outside)


def test_the_mcp_server_an_installed_connector_writes_is_the_installed_one(installed: Installed) -> None:
    """Its MCP config names the installed interpreter and nothing of the clone, and the server it
    starts runs the installed code even under a worker whose own PYTHONPATH names the clone (as
    the README's hand-made worker command does)."""
    ledger = installed.outside / "ledger.sqlite3"
    config = installed.inspect(
        "import json, pathlib; from shell.worker.driver import mcp_session_config; "
        f"print(json.dumps(mcp_session_config(pathlib.Path({str(ledger)!r}), {PROBE_PREFIX + '0' * 32!r})))")
    assert str(REPOSITORY) not in json.dumps(config)
    server = config["mcpServers"][MCP_SERVER_NAME]  # type: ignore[index]
    assert Path(server["command"]) == installed.python
    worker = {**installed.environment, "PYTHONPATH": str(REPOSITORY)}
    environment = {**worker, **server["env"]}
    where = subprocess.run(
        [server["command"], server["args"][0], "-c", "import json, sys, shell; print(json.dumps("
         "{'path': sys.path, 'shell': shell.__file__, 'stdlib': json.__file__}))"],
        cwd=installed.outside, env=environment, capture_output=True, text=True, timeout=30, check=True)
    found = json.loads(where.stdout)
    site = Path(found["shell"]).resolve().parents[1]
    assert site.is_relative_to(installed.venv.resolve()), found["shell"]
    positions = [Path(entry).resolve() for entry in found["path"] if entry]
    stdlib = Path(found["stdlib"]).resolve().parents[1]
    assert positions.index(stdlib) < positions.index(site), found["path"]  # nothing stands before it
    _handshake([server["command"], *server["args"]], environment, installed.outside)


def test_pipx_installs_the_command(installed: Installed, tmp_path: Path) -> None:
    pipx = shutil.which("pipx")
    if pipx is None:
        pytest.skip("pipx is not installed on this machine: `pip install` alone is tested")
    (wheel,) = (installed.venv.parent / "dist").glob("*.whl")
    environment = {**installed.environment, "PIPX_HOME": str(tmp_path / "pipx"),
                   "PIPX_BIN_DIR": str(tmp_path / "bin")}  # fmt: skip
    done = installed.run(pipx, "install", wheel, env=environment, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    version = installed.run(tmp_path / "bin" / "basecamp-connect", "--version", env=environment)
    assert version.stdout.strip() == "basecamp-connect 0.1.0"
