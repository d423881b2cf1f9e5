"""Skills: SKILL.md parsing, built-in then workspace order, the disabled list, the prompt
section, read_skill through the real tool registry, /skills and ``bot skills``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.agent.skills.catalog import RECHECK_S, SkillCatalog, builtin_folder
from bot.agent.skills.commands import register_skill_commands, skills_listing
from bot.agent.skills.loader import discover
from bot.agent.toolbox import ToolCall, ToolContext, ToolServices
from bot.cli.app import app
from bot.errors import SkillError, ToolError
from bot.handlers.commands import CommandRouter
from bot.messages import ChatKey, InboundMessage
from tests.conftest import DaemonFactory
from tests.fakes.channel import FakeChannel
from tests.fakes.llm_server import FakeLLM
from tools.registry import ToolRegistry
from tools.skills import ReadSkillTool

WS = "default"


def write_skill(folder: Path, name: str, front: str, body: str = "Do it well.") -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def builtin(tmp_path: Path) -> Path:
    folder = tmp_path / "builtin"
    write_skill(folder, "alpha", "name: alpha\ndescription: Built-in alpha.", "Alpha v1.")
    write_skill(folder, "beta", "name: beta\ndescription: Built-in beta.\nalways: true", "Beta!")
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "workspaces"


def own(root: Path) -> Path:
    return root / WS / "skills"


@pytest.mark.parametrize(
    ("front", "problem"),
    [
        ("name: other\ndescription: x", "name must equal the folder name 'broken'"),
        ("name: broken", "description is missing"),
        ("name: no\ndescription: x", "name must be text; quote it"),
        ("name: broken\ndescription: [unclosed", "front matter is not valid YAML"),
        ("name: broken\ndescription: x\nalways: maybe", "always must be true or false"),
        ("name: broken\ndescription: x\nrequires: {bins: ls}", "requires.bins must be a list"),
        ("- just\n- a list", "front matter must be a mapping"),
        # in every prompt of the workspace: capped as MCP tool descriptions are
        ("name: broken\ndescription: " + "word " * 300, "description is 1,499 characters;"),
    ],
)
def test_front_matter_errors_name_the_file(tmp_path: Path, front: str, problem: str) -> None:
    path = write_skill(tmp_path, "broken", front)
    skills, problems = discover(tmp_path, "workspace")
    assert skills == {}
    assert len(problems) == 1
    assert problems[0].startswith(f"{path}: ") and problem in problems[0]


def test_a_description_of_the_longest_allowed_length_loads(tmp_path: Path) -> None:
    longest = "x" * 1_024
    write_skill(tmp_path, "long", f"name: long\ndescription: {longest}")
    skills, problems = discover(tmp_path, "workspace")
    assert problems == [] and skills["long"].description == longest


def test_a_skill_saved_with_a_bom_and_crlf_loads(tmp_path: Path) -> None:
    """Windows editors: a UTF-8 BOM hid the '---' ("no front matter")."""
    path = tmp_path / "win" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(
        b"\xef\xbb\xbf---\r\nname: win\r\ndescription: Saved on Windows.\r\n---\r\nDo it.\r\n"
    )
    skills, problems = discover(tmp_path, "workspace")
    assert problems == []
    assert skills["win"].description == "Saved on Windows." and skills["win"].body == "Do it."


def test_a_file_without_front_matter_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "plain" / "SKILL.md"
    path.parent.mkdir()
    path.write_text("# just markdown\n", encoding="utf-8")
    assert discover(tmp_path, "workspace")[1] == [
        f"{path}: no front matter (a '---' block with name and description)"
    ]


def test_workspace_skills_override_builtins_by_name(builtin: Path, root: Path) -> None:
    write_skill(own(root), "alpha", "name: alpha\ndescription: Mine.", "Alpha v2.")
    write_skill(own(root), "gamma", "name: gamma\ndescription: Only here.")
    catalog = SkillCatalog(root, builtin)
    states = {s.skill.name: s for s in catalog.states(WS)}
    assert sorted(states) == ["alpha", "beta", "gamma"]
    assert states["alpha"].skill.source == "workspace"
    assert catalog.read(WS, "alpha") == "Alpha v2."
    other = SkillCatalog(root, builtin)  # another workspace sees only the built-ins
    assert other.read("elsewhere", "alpha") == "Alpha v1."


def test_prompt_inlines_always_on_and_lists_the_rest(builtin: Path, root: Path) -> None:
    write_skill(
        own(root),
        "needs-bin",
        "name: needs-bin\ndescription: Uses a tool.\nrequires:\n  bins: [no-such-binary-xyz]",
    )
    write_skill(
        own(root),
        "claw",
        "name: claw\ndescription: From another agent.\n"
        'metadata: {"openclaw": {"requires": {"env": ["NO_SUCH_VAR_XYZ"]}}}',
    )
    write_skill(
        own(root),
        "nano",
        "name: nano\ndescription: Nanobot style.\nmetadata:\n  nanobot:\n"
        "    requires:\n      bins: [sh]",
    )
    section = SkillCatalog(root, builtin).prompt_section(WS)
    assert section is not None
    assert section.startswith("## Skill: beta (always on)\n\nBeta!")
    assert "- alpha: Built-in alpha.\n" in section
    assert "- needs-bin: Uses a tool. (unavailable: missing binary no-such-binary-xyz)" in section
    assert "- claw: From another agent. (unavailable: missing env NO_SUCH_VAR_XYZ)" in section
    assert "- nano: Nanobot style.\n" in section + "\n"
    assert "Do it well." not in section  # the others' bodies come through read_skill


def test_disabled_skills_leave_the_prompt_and_the_choice_is_kept(builtin: Path, root: Path) -> None:
    catalog = SkillCatalog(root, builtin)
    before = catalog.prompt_section(WS)
    assert catalog.prompt_section(WS) == before  # unchanged files: the same bytes
    catalog.set_enabled(WS, "beta", False)
    catalog.set_enabled(WS, "alpha", False)
    assert catalog.prompt_section(WS) is None
    assert (own(root) / "disabled.txt").read_text() == "alpha\nbeta\n"
    assert not SkillCatalog(root, builtin).states(WS)[0].enabled  # read back from the file


@pytest.mark.parametrize("kind", ["cp1252", "directory"])
def test_an_unreadable_disabled_list_is_reported_and_disables_nothing(
    builtin: Path, root: Path, kind: str
) -> None:
    """A disabled.txt saved by a Windows editor ("# désactivé" in cp1252) failed every
    turn of the workspace, /skills and `bot skills list` with a UnicodeDecodeError."""
    own(root).mkdir(parents=True)
    listed = own(root) / "disabled.txt"
    if kind == "directory":
        listed.mkdir()
    else:
        listed.write_bytes("# d\xe9sactiv\xe9\nalpha\n".encode("cp1252"))
    catalog = SkillCatalog(root, builtin)
    assert all(s.enabled for s in catalog.states(WS))
    assert catalog.prompt_section(WS) is not None
    [problem] = catalog.problems(WS)
    assert "disabled.txt" in problem and "no skill is disabled" in problem
    assert "Skipped (fix these files):" in skills_listing(catalog, WS)
    with pytest.raises(SkillError, match="fix or remove it first"):
        catalog.set_enabled(WS, "alpha", False)  # the admin's file is not overwritten
    if kind == "cp1252":
        assert listed.read_bytes().startswith(b"# d\xe9sactiv")


def test_a_hand_edited_skill_shows_in_the_next_prompt(builtin: Path, root: Path) -> None:
    """The section is kept between turns only while the skill files stay as they were."""
    catalog = SkillCatalog(root, builtin)
    before = catalog.prompt_section(WS)
    assert before is not None and "- gamma:" not in before
    write_skill(own(root), "gamma", "name: gamma\ndescription: Added by hand.")
    after = catalog.prompt_section(WS)
    assert after is not None and "- gamma: Added by hand." in after
    write_skill(own(root), "gamma", "name: gamma\ndescription: Edited by hand, longer.")
    edited = catalog.prompt_section(WS)
    assert edited is not None and "- gamma: Edited by hand, longer." in edited


def test_a_binary_installed_while_running_makes_its_skill_usable(
    builtin: Path, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Requirements are checked again every few seconds, not only when SKILL.md changes;
    while they hold, the section is the same text (the prompt cache keeps hitting)."""
    bins = tmp_path / "bin"
    bins.mkdir()
    monkeypatch.setenv("PATH", f"{bins}{os.pathsep}{os.environ.get('PATH', '')}")
    write_skill(own(root), "pdf", "name: pdf\ndescription: PDFs.\nrequires: {bins: [qpdf-xyz]}")
    now = [0.0]
    catalog = SkillCatalog(root, builtin, clock=lambda: now[0])
    before = catalog.prompt_section(WS)
    assert before is not None and "- pdf: PDFs. (unavailable: missing binary qpdf-xyz)" in before
    tool = bins / "qpdf-xyz"
    tool.write_text("#!/bin/sh\n", encoding="utf-8")
    tool.chmod(0o755)
    now[0] = RECHECK_S - 0.1
    assert catalog.prompt_section(WS) is before  # checked again only after a while
    now[0] = RECHECK_S
    after = catalog.prompt_section(WS)
    assert after is not None and "- pdf: PDFs." in after and "unavailable" not in after
    assert catalog.read(WS, "pdf").startswith("Do it well.")
    now[0] = 3 * RECHECK_S
    assert catalog.prompt_section(WS) is after  # nothing changed: the same section


async def test_read_skill_through_the_registry(builtin: Path, root: Path) -> None:
    write_skill(own(root), "alpha", "name: alpha\ndescription: Mine.", "Alpha v2.")
    (own(root) / "alpha" / "scripts").mkdir()
    (own(root) / "alpha" / "scripts" / "run.sh").write_text("echo hi\n")
    write_skill(
        own(root), "offline", "name: offline\ndescription: Needs.\nrequires: {bins: [nope-xyz]}"
    )
    catalog = SkillCatalog(root, builtin)
    catalog.set_enabled(WS, "beta", False)
    registry = ToolRegistry()
    registry.register(ReadSkillTool(), builtin=True)
    ctx = ToolContext(ChatKey("t", "1"), "u1", services=ToolServices(skills=catalog))

    async def read(name: str) -> str:
        result = await registry.execute(ToolCall("c1", "read_skill", {"name": name}), ctx)
        return result.content

    found = await read("alpha")
    assert found.startswith("Alpha v2.") and "scripts/run.sh" in found
    unknown = await read("nothing")
    assert unknown.startswith("Error") and "does not exist" in unknown
    disabled = await read("beta")
    assert disabled.startswith("Error") and "disabled" in disabled
    unavailable = await read("offline")
    assert unavailable.startswith("Error") and "missing binary nope-xyz" in unavailable


def msg(user: str = "u1") -> InboundMessage:
    return InboundMessage(ChatKey("t", "1"), user, "/skills")


async def test_skills_command_lists_and_only_admins_toggle(builtin: Path, root: Path) -> None:
    write_skill(own(root), "bad", "name: wrong\ndescription: x")
    catalog = SkillCatalog(root, builtin)
    router = CommandRouter()
    register_skill_commands(
        router, catalog, is_admin=lambda m, ws: m.user_id == "boss", workspace_of=lambda m: WS
    )
    command = router.match(msg())
    assert command is not None
    assert await command[0].func(msg(), "") == "Only an admin can list, enable or disable skills."
    listing = await command[0].func(msg("boss"), "")
    assert "- alpha (builtin): Built-in alpha." in listing
    assert "- beta (always on; builtin): Built-in beta." in listing
    assert "Skipped (fix these files):" in listing and "bad/SKILL.md" in listing
    # first: a long listing is cut at its end, and these are what needs fixing
    assert (
        listing.index("bad/SKILL.md")
        < listing.index("Skills of workspace")
        < listing.index("- alpha")
    )
    assert await command[0].func(msg(), "disable alpha") == (
        "Only an admin can list, enable or disable skills."
    )
    assert await command[0].func(msg("boss"), "disable alpha") == "Skill alpha is now disabled."
    assert "- alpha (disabled; builtin)" in await command[0].func(msg("boss"), "")
    # names are lower-case: "Alpha" is alpha (it was "no skill named 'Alpha'")
    assert await command[0].func(msg("boss"), "Enable Alpha") == "Skill alpha is now enabled."
    with pytest.raises(ToolError, match=r"no skill named 'zzz' in workspace .*; /skills lists"):
        await command[0].func(msg("boss"), "enable zzz")
    with pytest.raises(ToolError, match=r"^usage: /skills \[enable\|disable <name>\]$"):
        await command[0].func(msg("boss"), "toggle")


async def test_a_workspaces_own_admin_manages_its_skills(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM
) -> None:
    """[workspaces.team] admins could /soul set there but /skills said "Only an admin":
    it asked the global list alone."""
    _, chat = await daemon_factory(
        channel=FakeChannel("test", trusted=False),
        access={"dm_policy": "open"},
        admins=["test:boss"],
        workspaces={"routes": {"test:g1": "team"}, "team": {"admins": ["test:lead"]}},
    )
    team, lobby = {"chat": "g1", "direct": False}, {"chat": "g2", "direct": False}
    said = await chat.ask("/skills disable weather-planning", user="lead", **team)
    assert said.text == "Skill weather-planning is now disabled."
    assert (await chat.ask("/skills", user="lead", **team)).text.startswith("Skills of workspace")
    refused = "Only an admin can list, enable or disable skills."
    assert (await chat.ask("/skills", user="lead", **lobby)).text == refused  # not theirs
    assert (await chat.ask("/skills", user="stranger", **team)).text == refused


def test_skills_cli_lists_and_toggles(tmp_path: Path) -> None:
    config = tmp_path / "bot.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\n', encoding="utf-8")
    runner = CliRunner()
    listed = runner.invoke(app, ["skills", "list", "-c", str(config)])
    assert listed.exit_code == 0, listed.output
    assert "- reminders (builtin)" in listed.output
    off = runner.invoke(app, ["skills", "disable", "reminders", "-c", str(config)])
    assert off.exit_code == 0 and "skill reminders disabled" in off.output
    assert (
        "- reminders (disabled; builtin)"
        in runner.invoke(app, ["skills", "list", "-c", str(config)]).output
    )
    missing = runner.invoke(app, ["skills", "enable", "nope", "-c", str(config)])
    assert missing.exit_code == 1


def test_skills_cli_makes_no_workspace_of_a_typo(tmp_path: Path) -> None:
    # README: "a typo makes no workspace"; enable|disable made one to hold disabled.txt
    config = tmp_path / "bot.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "data"}"\n[workspaces.routes]\n"telegram:5" = "team"\n',
        encoding="utf-8",
    )
    runner = CliRunner()
    for argv in (["list"], ["disable", "reminders"], ["enable", "reminders"]):
        typo = runner.invoke(app, ["skills", *argv, "-w", "teem", "-c", str(config)])
        assert typo.exit_code == 2, typo.output
        assert "there is no workspace 'teem' (workspaces: default, team)" in typo.output
    assert not (tmp_path / "data/workspaces").exists()
    # One the config names exists before anything made its folder.
    off = runner.invoke(app, ["skills", "disable", "reminders", "-w", "team", "-c", str(config)])
    assert off.exit_code == 0 and "skill reminders disabled" in off.output
    assert (tmp_path / "data/workspaces/team/skills/disabled.txt").read_text() == "reminders\n"


def test_the_shipped_skills_load_cleanly() -> None:
    skills, problems = discover(builtin_folder(), "builtin")
    assert problems == []
    assert {"reminders", "weather-planning", "drafting-messages"} <= set(skills)
    assert all(not s.missing() for s in skills.values())
