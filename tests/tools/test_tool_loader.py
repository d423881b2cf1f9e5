"""Tool discovery: built-in package scan, entry-point plugins, clash handling."""

from __future__ import annotations

import logging
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.agent.toolbox import FINAL_RESULT
from tools.final_result import FinalResultTool
from tools.loader import build_registry, discover_builtin, discover_plugins

TOOL_SRC = """
from typing import Any, ClassVar
from tools.base import Tool

class {cls}(Tool):
    name = "{name}"
    description = "{cls} tool"
    parameters: ClassVar[dict[str, Any]] = {{"type": "object"}}

    async def execute(self, ctx: Any, *args: Any, **kwargs: Any) -> str:
        return "{cls}"
"""


def tool_src(cls: str, name: str) -> str:
    return TOOL_SRC.format(cls=cls, name=name)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def uid() -> Iterator[str]:
    """A unique suffix for module names, removed from sys.modules afterwards."""
    suffix = uuid.uuid4().hex[:8]
    yield suffix
    for name in [m for m in sys.modules if suffix in m]:
        del sys.modules[name]


@pytest.fixture
def fake_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uid: str) -> str:
    pkg = f"faketools_{uid}"
    root = tmp_path / "pkgs" / pkg
    write(root / "__init__.py", "")
    write(root / "base.py", tool_src("SkippedBase", "skipped_base"))
    write(root / "_private.py", tool_src("Private", "private"))
    write(
        root / "alpha.py",
        tool_src("AlphaTool", "alpha")
        + """
from abc import abstractmethod
from tools.final_result import FinalResultTool  # imported, not defined here

class AbstractHelper(Tool):
    name = "abstract_helper"
    description = "still abstract"
    parameters: ClassVar[dict[str, Any]] = {"type": "object"}

    @abstractmethod
    async def execute(self, ctx: Any, *args: Any, **kwargs: Any) -> str: ...

class HiddenTool(AlphaTool):
    name = "hidden"
    _plugin_discoverable = False
""",
    )
    write(root / "beta.py", f"from {pkg}.alpha import AlphaTool\n" + tool_src("BetaTool", "beta"))
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    return pkg


@pytest.fixture
def plugin_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uid: str) -> str:
    """A fake installed distribution whose entry points cover every plugin case."""
    group = f"test.bot.tools.{uid}"
    site = tmp_path / "site"
    dist = site / f"fakeplug_{uid}-1.0.dist-info"
    write(dist / "METADATA", f"Metadata-Version: 2.1\nName: fakeplug-{uid}\nVersion: 1.0\n")
    write(
        dist / "entry_points.txt",
        f"""\
        [{group}]
        weather = plug_{uid}:PluginWeather
        module = plugmod_{uid}
        clash = plug_{uid}:ClashTool
        broken = broken_{uid}
        missing = plug_{uid}:DoesNotExist
        junk = plug_{uid}:helper
        badschema = badschema_{uid}:BadSchema
        """,
    )
    write(
        site / f"plug_{uid}.py",
        tool_src("PluginWeather", "plugin_weather")
        + tool_src("ClashTool", "alpha")
        + "\ndef helper() -> None: ...\n",
    )
    write(site / f"plugmod_{uid}.py", tool_src("ModTool", "mcp_mod"))
    write(site / f"broken_{uid}.py", "raise ImportError('plugin dependency missing')\n")
    bad_schema = tool_src("BadSchema", "bad_schema").replace(
        '"type": "object"', '"type": "object", "properties": {"v": {"type": "no-such-type"}}'
    )
    write(site / f"badschema_{uid}.py", bad_schema)
    monkeypatch.syspath_prepend(str(site))
    return group


def test_discovers_final_result_in_real_package() -> None:
    found = discover_builtin()
    assert FinalResultTool in found
    registry = build_registry(extra_plugins=False)
    assert registry.get(FINAL_RESULT) is not None and registry.is_builtin(FINAL_RESULT)


def test_discover_builtin_picks_only_concrete_discoverable_local_classes(
    fake_package: str,
) -> None:
    found = discover_builtin(fake_package)
    assert sorted(cls.__name__ for cls in found) == ["AlphaTool", "BetaTool"]
    assert all(cls.__module__.startswith(fake_package) for cls in found)


def test_discover_plugins_loads_classes_and_modules(
    plugin_group: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="tools.loader"):
        found = discover_plugins(plugin_group)
    assert sorted(cls.__name__ for cls in found) == [
        "BadSchema",  # loads; its schema is refused at registration
        "ClashTool",
        "ModTool",
        "PluginWeather",
    ]
    warnings = "\n".join(r.getMessage() for r in caplog.records)
    assert "'broken'" in warnings and "failed to load" in warnings
    assert "'missing'" in warnings
    assert "'junk'" in warnings and "neither a concrete Tool subclass" in warnings


def test_unknown_group_finds_nothing() -> None:
    assert discover_plugins(f"no.such.group.{uuid.uuid4().hex}") == []


def test_build_registry_keeps_builtin_on_clash(
    fake_package: str, plugin_group: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="tools.loader"):
        registry = build_registry(package=fake_package, group=plugin_group)
    assert registry.names() == ["alpha", "beta", "mcp_mod", "plugin_weather"]
    alpha = registry.get("alpha")
    assert alpha is not None and type(alpha).__name__ == "AlphaTool"
    assert registry.is_builtin("alpha") and not registry.is_builtin("plugin_weather")
    [clash] = [r for r in caplog.records if "clashes" in r.getMessage()]
    message = clash.getMessage()
    assert "ClashTool" in message and f"{fake_package}.alpha.AlphaTool" in message
    assert "built-in" in message
    names = [d["function"]["name"] for d in registry.definitions()]
    assert names == ["alpha", "beta", "plugin_weather", "mcp_mod"]


def test_a_plugin_with_an_invalid_schema_is_skipped_when_registered(
    fake_package: str, plugin_group: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="tools.loader"):
        registry = build_registry(package=fake_package, group=plugin_group)
    assert "bad_schema" not in registry
    [skipped] = [r for r in caplog.records if "BadSchema" in r.getMessage()]
    assert "could not be registered" in skipped.getMessage()
    assert skipped.exc_info is not None and "invalid parameters schema" in str(skipped.exc_info[1])
    registry.prepare()  # every tool left is sound


def test_every_builtin_schema_passes_prepare() -> None:
    """The daemon prepares its tools after ready: (a bad built-in raises there): every
    built-in's schema must pass the 2020-12 meta-schema."""
    registry = build_registry(extra_plugins=False)
    registry.prepare()
    for name in registry.names():
        tool = registry.get(name)
        assert tool is not None and type(tool)._validator is not None, name


def test_build_registry_without_plugins(fake_package: str, plugin_group: str) -> None:
    registry = build_registry(extra_plugins=False, package=fake_package, group=plugin_group)
    assert registry.names() == ["alpha", "beta"]


def test_broken_builtin_module_fails_loudly(fake_package: str, tmp_path: Path) -> None:
    write(tmp_path / "pkgs" / fake_package / "gamma.py", "raise RuntimeError('bug')\n")
    with pytest.raises(RuntimeError, match="bug"):
        discover_builtin(fake_package)


def test_builtin_definitions_pass_every_strict_provider() -> None:
    """Gemini refuses type lists and additionalProperties: the model sees the common
    subset, while arguments are still validated against the full schema (null allowed)."""
    from tests.fakes.provider_rules import tool_violations

    registry = build_registry(extra_plugins=False)
    definitions = registry.definitions()
    assert definitions and tool_violations(definitions) == []
    reminder = next(d for d in definitions if d["function"]["name"] == "create_reminder")
    recurrence = reminder["function"]["parameters"]["properties"]["recurrence"]
    assert recurrence["type"] == "string" and "May be null." in recurrence["description"]
    prepared = registry.prepare_call(
        "create_reminder", {"content": "tea", "time": "in 1 hour", "recurrence": None}
    )
    assert not isinstance(prepared, str), prepared  # null still accepted


async def test_the_daemon_prepares_its_tools_right_after_ready(
    daemon_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off the start-up path, but before any turn needs them: ``Daemon.start`` prepares
    every tool once ``ready:`` is logged."""
    for cls in discover_builtin():
        monkeypatch.setattr(cls, "_validator", None)  # as in a fresh process
    daemon, _ = await daemon_factory()
    assert daemon.state == "ready"
    for name in daemon.tools.names():
        assert type(daemon.tools.get(name))._validator is not None, name
