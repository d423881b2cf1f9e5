"""``bot init``: write a config and the workspace templates; at a terminal, ask for the
model, its key and each platform's token and the admin's id first, then run the doctor.

Scripts pass the same answers as options (``--model``, ``--api-key``, ``--admin``,
``--set channels.<name>.token=...``) and are never prompted. The answers are written
into the commented example, so the file still documents every key.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from bot.cli import process
from bot.cli.shared import fail, load_or_exit

app = typer.Typer()

NEXT_STEP = "next: `bot doctor` checks the set-up, `bot run` starts the bot"
DEFAULT_MODEL = "openai/gpt-4o-mini"


@dataclass
class Answers:
    """Keys to write: (section, key) -> value; ``admins`` joins the top-level list."""

    values: dict[tuple[str, str], str] = field(default_factory=dict)
    admins: list[str] = field(default_factory=list)


def set_key(text: str, section: str, key: str, value: object) -> str:
    """``text`` (TOML) with ``key`` of ``[section]`` ("" for the top) set to ``value``,
    the line's comment kept; added under the header when the example lacks it."""
    lines = text.splitlines()
    current, header_at = "", -1 if section else 0
    pattern = re.compile(rf"^{re.escape(key)}(\s*=\s*)(?:\"[^\"]*\"|\[[^\]]*\]|\S+)(.*)$")
    for n, line in enumerate(lines):
        found = re.match(r"^\[([^\]]+)\]", line)
        if found:
            current = found.group(1).strip()
            header_at = n if current == section else header_at
            continue
        hit = pattern.match(line) if current == section else None
        if hit:
            lines[n] = f"{key}{hit.group(1)}{json.dumps(value)}{hit.group(2)}"
            return "\n".join(lines) + "\n"
    if header_at < 0:
        return f"{text.rstrip()}\n\n[{section}]\n{key} = {json.dumps(value)}\n"
    lines.insert(header_at + (1 if section else 0), f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


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
                answers.admins.append(f"{spec.name}:{answer}")
            elif answer:
                answers.values[f"channels.{spec.name}", question.key] = answer


def _written(text: str, answers: Answers) -> str:
    for (section, key), value in answers.values.items():
        if value or key != "model":
            text = set_key(text, section, key, value)
    return set_key(text, "", "admins", answers.admins) if answers.admins else text


def _from_options(
    model: str, api_base: str, api_key: str, admins: list[str], sets: list[str]
) -> Answers:
    answers = Answers(admins=list(admins))
    for name, value in (("model", model), ("api_base", api_base), ("api_key", api_key)):
        if value:
            answers.values["llm", name] = value
    for item in sets:
        path, sep, value = item.partition("=")
        section, _, key = path.strip().rpartition(".")
        if not sep or not key:
            raise fail(f"--set {item!r}: write it as section.key=value, e.g. llm.model=...")
        answers.values[section, key] = value
    return answers


Opt = typer.Option


@app.command()
def init(  # every option by keyword: Typer passes them so
    *,
    config: Annotated[Path, Opt("--config", "-c")] = Path("bot.toml"),
    force: Annotated[bool, Opt(help="overwrite an existing config")] = False,
    interactive: Annotated[
        bool | None, Opt(help="ask the questions (default: when stdin is a terminal)")
    ] = None,
    model: Annotated[str, Opt(help="llm.model, e.g. ollama_chat/llama3.1")] = "",
    api_base: Annotated[str, Opt(help="llm.api_base: an OpenAI-compatible server")] = "",
    api_key: Annotated[str, Opt(help="llm.api_key (else the provider's variable)")] = "",
    admin: Annotated[list[str], Opt(help="an admin, <channel>:<user id>; repeatable")] = [],  # noqa: B006
    set_: Annotated[list[str], Opt("--set", help="any key: section.key=value; repeatable")] = [],  # noqa: B006
    offline: Annotated[
        bool, Opt(help="the doctor run after the questions skips the internet")
    ] = False,
) -> None:
    """Write a config and the workspace templates (an existing config is kept)."""
    from bot.app import example_config
    from bot.workspaces.folders import Workspaces

    process.private_files()  # the answers hold keys and tokens
    asking = sys.stdin.isatty() if interactive is None else interactive
    if config.exists() and not force:
        typer.echo(f"{config} exists; not overwritten (use --force)")
        asking = False
    else:
        answers = _from_options(model, api_base, api_key, admin, set_)
        if asking:
            _ask(answers)
        _write(config, _written(example_config(), answers))
    settings = load_or_exit(config, data_dir=True)
    ws = Workspaces(settings.data_dir / "workspaces").ensure()
    typer.echo(f"workspace ready at {ws} (edit AGENTS.md, SOUL.md, USER.md)")
    if not asking:
        typer.echo(NEXT_STEP)
        return
    raise typer.Exit(_doctor(config, offline))


def _write(config: Path, text: str) -> None:
    try:
        config.write_text(text, encoding="utf-8")
    except OSError as exc:
        folder = config.parent if not config.parent.is_dir() else None
        fix = f"create {folder} first" if folder else "check the folder's permissions"
        raise fail(
            f"cannot write {config} ({exc.strerror}); {fix} or pass another --config"
        ) from None
    typer.echo(f"wrote {config}")


def _doctor(config: Path, offline: bool) -> int:
    from bot.app import mcp_checks
    from bot.ops.doctor import exit_code, render, run_checks

    typer.echo("checking the set-up (bot doctor):")
    process.setup_logging("CRITICAL")
    checks = asyncio.run(run_checks(config, mcp_checks, offline=offline))
    typer.echo(render(checks))
    typer.echo(
        "next: `bot run` starts the bot"
        if exit_code(checks) == 0
        else "fix the above, then `bot doctor`"
    )
    return exit_code(checks)
