"""A PostgreSQL URL whose schema the store may not prepare: a role without CREATE on
it, or a ``?search_path`` that names no schema. Every command said so with a traceback
(asyncpg's InsufficientPrivilegeError, InvalidSchemaNameError, exit 1) and `bot doctor`
said the store was ok; now one line names the schema's URL and what to do."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from bot.config import Settings
from bot.errors import StoreError
from bot.ops.doctor import check_store
from bot.store.postgres.database import PostgresDatabase, safe_url
from tests.bot.test_cli_errors import _bot
from tests.fakes.pg_schema import PG_URL, empty_schema, in_schema

NO_CREATE = "permission denied for schema"
HINT = "(the user needs CREATE on the schema)"


@contextlib.asynccontextmanager
async def without_create() -> AsyncIterator[tuple[str, str]]:
    """A fresh schema and the URL of a role that may use it but create nothing in it."""
    role = f"r_{secrets.token_hex(6)}"
    admin = await asyncpg.connect(PG_URL)
    await admin.execute(f"CREATE ROLE {role} LOGIN")
    try:
        async with empty_schema() as url:
            schema = url.rsplit("search_path=", 1)[1]
            await admin.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
            parts = urlsplit(url)
            netloc = f"{role}@{parts.hostname}:{parts.port or 5432}"
            yield urlunsplit(parts._replace(netloc=netloc)), schema
    finally:
        await admin.execute(f"DROP ROLE {role}")
        await admin.close()


async def test_a_role_without_create_is_told_so_at_open_and_by_the_doctor(
    tmp_path: Path,
) -> None:
    async with without_create() as (url, schema):
        with pytest.raises(StoreError) as raised:
            await PostgresDatabase(url).open()
        said = str(raised.value)
        assert said.startswith("cannot prepare the schema at postgresql://"), said
        assert f"{NO_CREATE} {schema} {HINT}" in said
        check = await check_store(
            Settings.model_validate({"data_dir": tmp_path, "store": {"url": url}})
        )
        assert check.status == "failed" and f"{NO_CREATE} {schema} {HINT}" in check.detail


async def test_a_search_path_naming_no_schema_is_told_so(tmp_path: Path) -> None:
    """The message names the schema meant (it printed ``search_path=***``)."""
    missing = f"nosuch_{secrets.token_hex(4)}"
    url = in_schema(PG_URL, missing)
    with pytest.raises(StoreError, match=r"cannot prepare the schema at .*no schema") as raised:
        await PostgresDatabase(url).open()
    assert f"search_path={missing}:" in str(raised.value)
    settings = Settings.model_validate({"data_dir": tmp_path, "store": {"url": url}})
    check = await check_store(settings)
    assert check.status == "failed" and "no schema has been selected" in check.detail
    assert f"search_path={missing}" in check.detail


def test_only_secret_bearing_query_values_are_masked() -> None:
    url = (
        "postgresql://bot:pw1@db:5432/bot?search_path=bots&password=pw2&sslpassword=pw3"
        "&sslkey=/k.pem&my_token=t&client_secret=s&application_name=replica-1"
    )
    assert safe_url(url) == (
        "postgresql://bot:***@db:5432/bot?search_path=bots&password=***&sslpassword=***"
        "&sslkey=***&my_token=***&client_secret=***&application_name=replica-1"
    )


@pytest.mark.parametrize(
    "argv",
    [["run"], ["reminders", "list"], ["store", "copy", "--from", "{url}", "--to", "sqlite:t.db"]],
)
async def test_commands_say_it_in_one_line_as_for_a_bad_host(
    tmp_path: Path, argv: list[str]
) -> None:
    async with without_create() as (url, schema):
        done = _bot([a.format(url=url) for a in argv], _env(tmp_path, url), tmp_path)
    bad_host = "postgresql://postgres@127.0.0.1:1/x"
    refused = _bot([a.format(url=bad_host) for a in argv], _env(tmp_path, bad_host), tmp_path)
    out = done.stdout + done.stderr
    assert "Traceback" not in out and f"{NO_CREATE} {schema} {HINT}" in out, out
    assert len([line for line in out.splitlines() if NO_CREATE in line]) == 1, out
    assert done.returncode == refused.returncode != 0, out


def _env(tmp_path: Path, url: str) -> dict[str, str]:
    return {
        "BOT_DATA_DIR": str(tmp_path / "data"),
        "BOT_WEB__PORT": "0",
        "BOT_STORE__URL": url,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
