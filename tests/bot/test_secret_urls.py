"""A URL with a mistyped scheme is refused without printing its password or key: the
refusal shows the scheme and host (what the operator got wrong), the secret as ``***``.
Run as the real ``bot`` process, as the operator meets it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.ops.redaction import masked_url
from tests.bot.test_cli_errors import _bot

PASSWORD = "hunter2hunter2"
KEY = "SUPERSECRETKEY123456"
PATH_KEY = "abcDEF1234567890xyz"
REPO = {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}  # this checkout's bot


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "bot.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\n{extra}', encoding="utf-8")
    return path


def _refused(argv: list[str], env: dict[str, str], cwd: Path, *secrets: str, code: int = 2) -> str:
    """What a refused command printed, which names none of ``secrets``."""
    done = _bot(argv, {**REPO, **env}, cwd)
    assert done.returncode == code, done.stderr
    for secret in secrets:
        assert secret not in done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"postgresql+asyncpg://bot:{PASSWORD}@db:5432/bot", "postgresql+asyncpg://bot:***@db"),
        (f"mysql://user:{PASSWORD}@db/x", "'mysql://user:***@db/x'"),
    ],
)
@pytest.mark.parametrize("argv", [["run"], ["doctor", "--offline"]])
def test_a_store_url_of_another_scheme_in_the_file(
    tmp_path: Path, argv: list[str], url: str, shown: str
) -> None:
    config = _config(tmp_path, f'[store]\nurl = "{url}"\n')
    code = 1 if argv[0] == "doctor" else 2  # the doctor's failed check, a refused start
    out = _refused([*argv, "--config", str(config)], {}, tmp_path, PASSWORD, code=code)
    assert "key 'store.url'" in out and shown in out, out


def test_a_store_url_of_another_scheme_from_the_environment(tmp_path: Path) -> None:
    _config(tmp_path)
    env = {"BOT_STORE__URL": f"mysql://u:{PASSWORD}@h/x"}
    out = _refused(["status"], env, tmp_path, PASSWORD)
    assert "key 'store.url' from BOT_STORE__URL" in out and "(got 'mysql://u:***@h/x')" in out


def test_a_bare_secret_as_the_store_url_is_not_echoed(tmp_path: Path) -> None:
    _config(tmp_path)
    out = _refused(["status"], {"BOT_STORE__URL": PASSWORD}, tmp_path, PASSWORD)
    assert "key 'store.url' from BOT_STORE__URL" in out


@pytest.mark.parametrize("option", ["--from", "--to"])
def test_store_copy_with_a_url_of_another_scheme(tmp_path: Path, option: str) -> None:
    """``--from postgresql+asyncpg://...`` was taken for a file's path: 'no database at'
    the URL, password and all (and as ``--to``, a SQLite file of that name)."""
    url = f"postgresql+asyncpg://bot:{PASSWORD}@db:5432/bot"
    other = "--to" if option == "--from" else "--from"
    (tmp_path / "src.db").write_bytes(b"")
    argv = ["store", "copy", option, url, other, str(tmp_path / "src.db")]
    out = _refused(argv, {}, tmp_path, PASSWORD)
    assert f"error: {option} postgresql+asyncpg://bot:***@db:5432/bot: expected" in out, out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.db"]


def test_an_mcp_url_with_a_mistyped_scheme(tmp_path: Path) -> None:
    url = f"htps://mcp.example.com/api/s/{PATH_KEY}/mcp?api_key={KEY}&region=eu"
    config = _config(tmp_path, f'[mcp.servers.search]\nurl = "{url}"\n')
    out = _refused(["run", "--config", str(config)], {}, tmp_path, KEY, PATH_KEY)
    assert "got 'htps://mcp.example.com/api/s/***/mcp?api_key=***&region=eu'" in out, out


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        # a password with an unescaped / # ? or @ in it still ends at the host
        ("postgresql://bot:pa/ss@db/bot", "postgresql://bot:***@db/bot"),
        ("postgresql://bot:pa#ss@db/bot", "postgresql://bot:***@db/bot"),
        ("postgresql://bot:pa?ss@db/bot", "postgresql://bot:***@db/bot"),
        ("postgresql://bot:p@ss@db:5432/bot", "postgresql://bot:***@db:5432/bot"),
        ("postgresql://bot:pw@db:port/bot", "postgresql://bot:***@db:port/bot"),  # a bad port
        ("postgresql://u:pw@[::1]:5432/x", "postgresql://u:***@[::1]:5432/x"),
        ("bot:pw@db/x", "bot:***@db/x"),  # no scheme at all
        (
            "https://h/x?search_path=s&Password=p&sslkey=k",
            "https://h/x?search_path=s&Password=***&sslkey=***",
        ),
        ("https://h/cb#access_token=t&state=1", "https://h/cb#access_token=***&state=1"),
        ("sqlite:data/bot.db", "sqlite:data/bot.db"),
    ],
)
def test_masked_url(url: str, shown: str) -> None:
    assert masked_url(url) == shown
