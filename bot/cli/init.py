"""``bot init``: write a config and the workspace templates; at a terminal, ask for the
model, its key and each platform's token and the admin's id first, then run the doctor.

Scripts pass the same answers as options (``--model``, ``--api-key``, ``--admin``,
``--set channels.<name>.token=...``) and are never prompted. The answers are written
into the commented example, so the file still documents every key.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from bot.cli import process
from bot.cli.shared import ConfigOpt, fail, load_or_exit
from bot.cli.toml_edit import parse_value, set_key, toml_key

app = typer.Typer()

NEXT_STEP = "next: `bot doctor` checks the set-up, `bot run` starts the bot"
DEFAULT_MODEL = "openai/gpt-4o-mini"


@dataclass
class Answers:
    """Keys to write: (section, key) -> value; ``admins`` joins the top-level list."""

    values: dict[tuple[str, str], object] = field(default_factory=dict)
    admins: list[str] = field(default_factory=list)
    # --set values read as a number or a boolean, as typed: a text setting that looks
    # like one (a replica id "2") is written as text when the typed value is refused.
    typed: dict[tuple[str, str], str] = field(default_factory=dict)

    def as_text(self, refusal: str) -> Answers | None:
        """These answers with the typed value ``refusal`` names back as the text it was
        typed as; None when it names none of them."""
        for (section, key), text in self.typed.items():
            if f"'{section}.{key}'" in refusal or (f"'{key}'" in refusal and not section):
                typed = {k: v for k, v in self.typed.items() if k != (section, key)}
                values = {**self.values, (section, key): text}
                return Answers(values, list(self.admins), typed)
        return None


def _ask(answers: Answers) -> None:
    """The questions, at a terminal; empty answers keep the example's value."""
    from channels.registry import SPECS

    typer.echo("Answer or press Enter to keep the default. Everything can be changed later.")
    model = typer.prompt("Model (a litellm name, e.g. ollama_chat/llama3.1)", DEFAULT_MODEL)
    answers.values["llm", "model"] = model
    base = typer.prompt("Model server URL (empty: the provider's own)", "", show_default=False)
    key = typer.prompt(
        "API key (empty: from the environment)", "", hide_input=True, show_default=False
    )
    answers.values.update({("llm", "api_base"): base, ("llm", "api_key"): key})
    for spec in SPECS:
        for n, question in enumerate(spec.setup):
            answer = typer.prompt(
                question.prompt, "", hide_input=question.secret, show_default=False
            ).strip()
            if not answer and n == 0:
                break  # this platform is skipped
            if question.admin and answer:
                if entry := _asked_admin(spec.name, question.prompt, answer):
                    answers.admins.append(entry)
            elif answer:
                answers.values[f"channels.{spec.name}", question.key] = answer


def _asked_admin(channel: str, prompt: str, answer: str) -> str:
    """The id typed for ``channel``'s admin as an entry; asked again until it is one a
    sender can match ("<channel>:42" typed in full became "<channel>:<channel>:42", and
    "@alice" matched nobody)."""
    from bot.config.admins import admin_entry

    while True:
        typed_channel = answer.lower().startswith(f"{channel}:")
        user = answer[len(channel) + 1 :].strip() if typed_channel else answer
        try:
            return admin_entry(f"{channel}:{user}")
        except ValueError as exc:
            typer.echo(f"{exc}; try again (empty: approve yourself by pairing)")
        answer = typer.prompt(prompt, "", show_default=False).strip()
        if not answer:
            return ""


def _written(text: str, answers: Answers) -> str:
    """The example with the answers in; a key that makes it invalid TOML (``llm=x`` over
    the ``[llm]`` table) is refused by name (exit 2), before anything is written."""
    items = list(answers.values.items())
    if answers.admins:
        items.append((("", "admins"), answers.admins))
    for (section, key), value in items:
        if not value and key == "model":
            continue
        text = set_key(text, section, key, value)
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            name = ".".join(toml_key(p) for p in [*section.split("."), key] if p)
            raise fail(f"{name}: cannot be set here ({exc})") from None
    return text


def _from_options(
    model: str, api_base: str, api_key: str, admins: list[str], sets: list[str]
) -> Answers:
    answers = Answers(admins=[_admin(item) for item in admins])
    for name, value in (("model", model), ("api_base", api_base), ("api_key", api_key)):
        if value:
            answers.values["llm", name] = value
    for item in sets:
        path, sep, value = item.partition("=")
        section, _, key = path.strip().rpartition(".")
        if not sep or not key:
            raise fail(f"--set {item!r}: write it as section.key=value, e.g. llm.model=...")
        parsed = answers.values[section, key] = parse_value(value)
        if isinstance(parsed, bool | int | float):
            answers.typed[section, key] = value
    return answers


def _admin(item: str) -> str:
    """``--admin`` as the config will hold it; one the daemon would match to nobody
    (``42``, ``telegarm:42``) is refused here (exit 2), not written."""
    from bot.config.admins import admin_entry, unknown_channel

    try:
        entry = admin_entry(item)
    except ValueError as exc:
        raise fail(f"--admin: {exc}") from None
    if problem := unknown_channel(entry):
        raise fail(f"--admin: {problem}")
    return entry


Opt = typer.Option
SET_HELP = (
    "any key: section.key=value, the value as TOML (9000, true, '[\"42\"]'), else text "
    "(as text too where the key takes text: cluster.replica=2); repeatable"
)


@app.command()
def init(  # every option by keyword: Typer passes them so
    *,
    config: ConfigOpt = None,
    force: Annotated[bool, Opt(help="overwrite an existing config")] = False,
    interactive: Annotated[
        bool | None, Opt(help="ask the questions (default: when stdin is a terminal)")
    ] = None,
    model: Annotated[str, Opt(help="llm.model, e.g. ollama_chat/llama3.1")] = "",
    api_base: Annotated[str, Opt(help="llm.api_base: an OpenAI-compatible server")] = "",
    api_key: Annotated[str, Opt(help="llm.api_key (else the provider's variable)")] = "",
    admin: Annotated[list[str], Opt(help="an admin, <channel>:<user id>; repeatable")] = [],  # noqa: B006
    set_: Annotated[list[str], Opt("--set", help=SET_HELP)] = [],  # noqa: B006
    offline: Annotated[
        bool, Opt(help="the doctor run after the questions skips the internet")
    ] = False,
) -> None:
    """Write a config and the workspace templates (an existing config is kept: the
    options given are set in it)."""
    from bot.config import resolve_config_path
    from bot.workspaces.folders import Workspaces

    process.private_files()  # the answers hold keys and tokens
    path = resolve_config_path(config)[0]  # --config, else $BOT_CONFIG, as every command
    asking = sys.stdin.isatty() if interactive is None else interactive
    answers = _from_options(model, api_base, api_key, admin, set_)
    given = bool(answers.values or answers.admins)
    if path.exists() and not force:
        asking = False
        if given:
            _update(path, answers)
        else:
            typer.echo(
                f"{path} exists; not overwritten (--model, --set key=value, ... change it"
                " in place; --force starts from scratch)"
            )
    else:
        if asking:
            _ask(answers)
        old = _old_values(path) if path.exists() else None
        _write(path, _checked(path, answers))
        if old is not None:
            _say_dropped(path, old)
    settings = load_or_exit(path, data_dir=True)
    ws = Workspaces(settings.data_dir / "workspaces").ensure()
    typer.echo(f"workspace ready at {ws} (edit AGENTS.md, SOUL.md, USER.md)")
    if not asking:
        typer.echo(NEXT_STEP)
        return
    raise typer.Exit(_doctor(path, offline))


def _checked(config: Path, answers: Answers, base: str | None = None) -> str:
    """The config to write (the answers in ``base``, else in the example), loaded through
    the settings first: one refused (a wrong type, an unknown key) is one line naming the
    key and exit 2, and no file."""
    from bot.app import example_config
    from bot.config.settings import settings_from_text
    from bot.errors import ConfigError

    first: ConfigError | None = None
    while True:
        text = _written(example_config() if base is None else base, answers)
        try:
            settings_from_text(text, config)
            return text
        except ConfigError as exc:
            first = first or exc
            retry = answers.as_text(str(exc))  # "2" for a text setting, not 2
            if retry is None:
                raise fail(f"{first}; nothing written") from None
            answers = retry


Leaves = dict[tuple[str, ...], object]


def _leaves(doc: dict[str, object], prefix: tuple[str, ...] = ()) -> Leaves:
    """Every value of a TOML document by its key's parts (``("llm", "model")``)."""
    found: Leaves = {}
    for key, value in doc.items():
        if isinstance(value, dict):
            found.update(_leaves(value, (*prefix, key)))
        else:
            found[(*prefix, key)] = value
    return found


def _read_config(config: Path) -> tuple[str, dict[str, object]]:
    """The existing config's text and document, or exit 2 naming why it cannot be."""
    try:
        text = config.read_bytes().decode("utf-8-sig")  # as the settings read it
        return text, tomllib.loads(text)
    except OSError as exc:
        raise fail(f"cannot read {config} ({exc.strerror}); nothing written") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise fail(f"{config}: not valid TOML ({exc}); nothing written") from None


def _update(config: Path, answers: Answers) -> None:
    """Answers for a config that exists, set in it in place, the rest kept: it was
    "exists; not overwritten", the answers ignored, and --force then dropped the token
    and the admins. ``--admin`` joins the admins already there."""
    text, before = _read_config(config)
    had = before.get("admins")
    if answers.admins and isinstance(had, list):
        answers.admins = list(dict.fromkeys([*map(str, had), *answers.admins]))
    answered = [(*section.split("."), key) for section, key in answers.values]
    answered = [tuple(p for p in parts if p) for parts in answered]
    answered += [("admins",)] if answers.admins else []
    updated = _checked(config, answers, text)
    after = _leaves(tomllib.loads(updated))
    old = _leaves(before)
    changed = [".".join(k) for k in dict.fromkeys(answered) if old.get(k) != after.get(k)]
    if not changed:
        typer.echo(f"{config}: already so, nothing changed")
        return
    _write(config, updated)
    typer.echo(f"changed in {config}: {', '.join(changed)} (the rest kept)")


def _old_values(config: Path) -> Leaves | None:
    """What a config --force replaces holds, or None when it cannot be read."""
    try:
        return _leaves(tomllib.loads(config.read_bytes().decode("utf-8-sig")))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def _say_dropped(config: Path, old: Leaves) -> None:
    """--force starts from scratch: the old file's values it did not keep, by name (a
    token and the admins went without a word)."""
    new = _leaves(tomllib.loads(config.read_bytes().decode("utf-8")))
    gone = [".".join(k) for k, v in old.items() if v not in ("", []) and new.get(k) != v]
    if gone:
        typer.echo(
            f"--force: started from scratch; not kept from the old {config}: {', '.join(gone)}",
            err=True,
        )


def _write(config: Path, text: str) -> None:
    """Into a private temporary file beside it, renamed over it once whole: an
    interrupted write leaves the old config or none, never half of one."""
    target = Path(os.path.realpath(config))  # a symlinked config is written through
    temp = ""
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:  # mkstemp: mode 0600
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, target)
    except OSError as exc:
        if temp:
            Path(temp).unlink(missing_ok=True)
        folder = config.parent if not config.parent.is_dir() else None
        fix = f"create {folder} first" if folder else "check the folder's permissions"
        raise fail(
            f"cannot write {config} ({exc.strerror}); {fix} or pass another --config"
        ) from None
    typer.echo(f"wrote {config}")


def _doctor(config: Path, offline: bool) -> int:
    from bot.app import mcp_checks, tool_checks
    from bot.ops.doctor import exit_code, render, run_checks

    typer.echo("checking the set-up (bot doctor):")
    process.setup_logging("CRITICAL")
    checks = asyncio.run(run_checks(config, mcp_checks, offline=offline, notes=tool_checks))
    typer.echo(render(checks))
    typer.echo(
        "next: `bot run` starts the bot"
        if exit_code(checks) == 0
        else "fix the above, then `bot doctor`"
    )
    return exit_code(checks)
