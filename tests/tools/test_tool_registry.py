"""ToolRegistry: argument coercion, validation errors, name hints, execution, ordering."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, ClassVar

import pytest

from bot.agent.toolbox import ERROR_HINT, ToolBox, ToolCall, ToolContext
from bot.errors import ToolError
from bot.messages import ChatKey
from tools.base import Tool
from tools.registry import ToolRegistry

CTX = ToolContext(chat_key=ChatKey("test", "chat"), user_id="u1")


class WeatherTool(Tool):
    name = "get_weather"
    description = "Weather for a city and day."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    read_only = True

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def execute(self, ctx: ToolContext, *, city: str, days: int = 1) -> str:
        self.calls.append({"city": city, "days": days})
        return f"{city}: rain for {days} day(s)"


class ArgumentsTool(Tool):
    """Has a real parameter called "arguments", so the wrapper must not be unwrapped."""

    name = "run_script"
    description = "Runs a script."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"arguments": {"type": "object"}},
        "required": ["arguments"],
    }

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        return json.dumps(kwargs)


class RaisingTool(Tool):
    name = "flaky"
    description = "Raises whatever it is told to."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"kind": {"type": "string"}},
    }
    exclusive = True

    async def execute(self, ctx: ToolContext, *, kind: str = "") -> str:
        if kind == "tool":
            raise ToolError("city not found")
        if kind == "runtime":
            raise RuntimeError("boom")
        if kind == "empty":
            raise ToolError()
        return "Error: soft failure reported by the tool"


class DictTool(Tool):
    name = "mcp_lookup"
    description = "Returns a dict."
    parameters: ClassVar[dict[str, Any]] = {"type": "object"}

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> Any:
        return {"temp": 21, "city": "上海"}


def tool_class(
    tool_name: str, parameters: dict[str, Any] | None = None, execute: Any = None
) -> type[Tool]:
    async def default(self: Tool, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        return tool_name

    namespace = {
        "name": tool_name,
        "description": "x",
        "parameters": parameters or {"type": "object"},
        "execute": execute or default,
    }
    return type(f"T_{tool_name}", (Tool,), namespace)


@pytest.fixture
def weather() -> WeatherTool:
    return WeatherTool()


@pytest.fixture
def registry(weather: WeatherTool) -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(weather, builtin=True)
    reg.register(ArgumentsTool(), builtin=True)
    reg.register(RaisingTool(), builtin=True)
    reg.register(DictTool(), builtin=False)
    return reg


async def call(reg: ToolRegistry, name: Any, arguments: Any) -> Any:
    return await reg.execute(ToolCall(id="c1", name=name, arguments=arguments), CTX)


def test_registry_is_a_toolbox(registry: ToolRegistry) -> None:
    box: ToolBox = registry
    assert box is registry
    assert registry.names() == ["flaky", "get_weather", "mcp_lookup", "run_script"]
    assert "get_weather" in registry and len(registry) == 4
    assert registry.is_builtin("get_weather") and not registry.is_builtin("mcp_lookup")


def test_register_rejects_duplicates_and_bad_names(registry: ToolRegistry) -> None:
    with pytest.raises(ValueError, match="already registered"):
        registry.register(WeatherTool(), builtin=False)
    with pytest.raises(ValueError, match="invalid name"):
        registry.register(tool_class("bad name")(), builtin=False)


@pytest.mark.parametrize(
    "raw",
    [
        {"city": "Paris", "days": 2},
        '{"city": "Paris", "days": 2}',
        {"city": "Paris", "days": "2"},
        '"{\\"city\\": \\"Paris\\", \\"days\\": 2}"',
        {"arguments": {"city": "Paris", "days": 2}},
        {"arguments": '{"city": "Paris", "days": "2"}'},
    ],
)
async def test_argument_shapes_are_accepted(
    registry: ToolRegistry, weather: WeatherTool, raw: Any
) -> None:
    result = await call(registry, "get_weather", raw)
    assert not result.is_error
    assert result.content == "Paris: rain for 2 day(s)"
    assert result.arguments == {"city": "Paris", "days": 2}
    assert (result.call_id, result.name) == ("c1", "get_weather")
    assert weather.calls == [{"city": "Paris", "days": 2}]


@pytest.mark.parametrize("raw", [None, "", "  ", {}])
def test_empty_arguments_become_empty_object(registry: ToolRegistry, raw: Any) -> None:
    prepared = registry.prepare_call("flaky", raw)
    assert isinstance(prepared, tuple) and prepared[1] == {}


def test_arguments_wrapper_kept_when_it_is_a_real_parameter(registry: ToolRegistry) -> None:
    prepared = registry.prepare_call("run_script", {"arguments": {"x": 1}})
    assert isinstance(prepared, tuple)
    assert prepared[1] == {"arguments": {"x": 1}}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("{city: Paris}", "Error: arguments for tool 'get_weather' are not valid JSON: "),
        ("[1, 2]", "Error: arguments for tool 'get_weather' must be a JSON object, got array."),
        (42, "Error: arguments for tool 'get_weather' must be a JSON object, got number."),
        ({"arguments": "{oops"}, "Error: arguments for tool 'get_weather' are not valid JSON: "),
        ({"arguments": [1]}, "Error: arguments for tool 'get_weather' must be a JSON object"),
        (
            {"days": "9", "foo": 1},
            "Error: invalid arguments for tool 'get_weather': missing required parameter 'city'; "
            "parameter 'days': 9 is greater than the maximum of 7; unexpected parameter 'foo'",
        ),
        (
            {"city": 5},
            "Error: invalid arguments for tool 'get_weather': parameter 'city': "
            "5 is not of type 'string'",
        ),
    ],
)
async def test_bad_arguments_are_error_results(
    registry: ToolRegistry, weather: WeatherTool, raw: Any, expected: str
) -> None:
    result = await call(registry, "get_weather", raw)
    assert result.is_error
    assert result.content.startswith(expected)
    assert result.content.endswith("\n\n" + ERROR_HINT)
    assert result.arguments == {}
    assert weather.calls == []


async def test_unknown_tool_with_unique_fuzzy_match_is_not_executed(
    registry: ToolRegistry, weather: WeatherTool
) -> None:
    result = await call(registry, "Get-Weather", {"city": "Paris"})
    assert result.is_error
    assert result.content == (
        "Error: tool 'Get-Weather' not found. Did you mean 'get_weather'?\n\n" + ERROR_HINT
    )
    assert result.name == "Get-Weather"
    assert weather.calls == []


async def test_unknown_tool_without_unique_match(registry: ToolRegistry) -> None:
    result = await call(registry, "send_email", {})
    assert result.content == "Error: tool 'send_email' not found.\n\n" + ERROR_HINT
    registry.register(tool_class("get-weather")(), builtin=False)
    ambiguous = registry.prepare_call("GetWeather", {})
    assert ambiguous == "Error: tool 'GetWeather' not found."


@pytest.mark.parametrize("name", [None, "", 42])
async def test_missing_or_non_string_name(registry: ToolRegistry, name: Any) -> None:
    result = await call(registry, name, {})
    assert result.is_error
    assert result.content.startswith("Error: the tool call has no valid name")
    assert result.name == ""


async def test_tool_error_becomes_error_result(registry: ToolRegistry) -> None:
    result = await call(registry, "flaky", {"kind": "tool"})
    assert result.content == "Error: city not found\n\n" + ERROR_HINT
    assert result.is_error
    empty = await call(registry, "flaky", {"kind": "empty"})
    assert empty.content.startswith("Error: tool 'flaky' failed.")


async def test_unexpected_exception_is_logged_and_reported(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="tools.registry"):
        result = await call(registry, "flaky", {"kind": "runtime"})
    assert result.content == "Error: tool 'flaky' failed: RuntimeError: boom\n\n" + ERROR_HINT
    assert result.is_error
    [record] = caplog.records
    assert record.exc_info is not None and "flaky" in record.getMessage()


async def test_tool_output_starting_with_error_gets_hint(registry: ToolRegistry) -> None:
    result = await call(registry, "flaky", {"kind": "other"})
    assert result.is_error
    assert result.content.endswith(ERROR_HINT)
    assert result.arguments == {"kind": "other"}


async def test_non_string_output_is_json(registry: ToolRegistry) -> None:
    result = await call(registry, "mcp_lookup", None)
    assert not result.is_error
    assert json.loads(result.content) == {"temp": 21, "city": "上海"}
    assert "上海" in result.content


def test_definitions_order_and_cache(registry: ToolRegistry) -> None:
    registry.register(tool_class("mcp_alpha")(), builtin=False)
    registry.register(tool_class("zeta_plugin")(), builtin=False)
    first = registry.definitions()
    names = [d["function"]["name"] for d in first]
    assert names == [
        "flaky",
        "get_weather",
        "run_script",
        "zeta_plugin",
        "mcp_alpha",
        "mcp_lookup",
    ]
    assert registry.definitions() is first
    registry.register(tool_class("alpha")(), builtin=True)
    second = registry.definitions()
    assert second is not first and second[0]["function"]["name"] == "alpha"
    assert registry.definitions() is second
    assert registry.unregister("alpha") is not None
    third = registry.definitions()
    assert third is not second and [d["function"]["name"] for d in third] == names
    assert registry.unregister("nope") is None
    assert registry.definitions() is third


def test_concurrency_safe_by_name(registry: ToolRegistry) -> None:
    assert registry.concurrency_safe("get_weather") is True
    assert registry.concurrency_safe("flaky") is False  # exclusive
    assert registry.concurrency_safe("mcp_lookup") is False  # not read-only
    assert registry.concurrency_safe("nope") is False
    assert registry.concurrency_safe(None) is False


def test_schema_bug_is_refused_when_the_tool_is_prepared() -> None:
    """A ``$ref`` that resolves nowhere passes ``check_schema`` but could never be
    validated or shown to a provider: preparing it fails, naming the tool, and so does
    the registry's prepare() (what the daemon runs after ready:) when it holds one."""
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}
    cls = tool_class("broken_ref", schema)
    with pytest.raises(TypeError, match=r"broken_ref.*#/\$defs/missing"):
        cls.prepare()
    reg = ToolRegistry()
    reg.register(cls(), builtin=True)
    with pytest.raises(TypeError, match="broken_ref"):
        reg.prepare()


async def test_cancellation_propagates() -> None:
    async def execute(self: Tool, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        raise asyncio.CancelledError

    reg = ToolRegistry()
    reg.register(tool_class("cancel", execute=execute)(), builtin=True)
    with pytest.raises(asyncio.CancelledError):
        await call(reg, "cancel", {})


@pytest.mark.parametrize(
    "raw",
    [
        '{"city": "Paris", "days": NaN}',
        '{"city": "Paris", "days": Infinity}',
        '{"city": "Paris", "days": -Infinity}',
        {"city": "Paris", "days": float("nan")},
        {"city": "Paris", "extra": [1, {"deep": float("inf")}]},
    ],
)
async def test_non_finite_numbers_are_refused_before_the_tool_runs(
    registry: ToolRegistry, weather: WeatherTool, raw: Any
) -> None:
    result = await call(registry, "get_weather", raw)
    assert result.is_error
    assert "not a finite number" in result.content
    assert ("'days'" in result.content) or ("'extra[1].deep'" in result.content)
    assert weather.calls == []


@pytest.mark.parametrize(
    "raw",
    [
        '{"arguments": {"a": "x\\ud83d", "b\\udc00": ["\\ud800", {"c": "\\ud83d\\ude00 ok"}]}}',
        {"arguments": {"a": "x\ud83d", "b\udc00": ["\ud800", {"c": "\U0001f600 ok"}]}},
    ],
)
def test_lone_surrogates_in_arguments_become_replacement_characters(raw: Any) -> None:
    """Half an emoji sent as a JSON escape is a lone surrogate after ``json.loads``: no
    tool can write it as UTF-8, so every string (keys too, at any depth) is made valid
    before validation; a whole pair stays the emoji it is."""
    reg = ToolRegistry()
    reg.register(ArgumentsTool(), builtin=True)
    prepared = reg.prepare_call("run_script", raw)
    assert isinstance(prepared, tuple)
    assert prepared[1] == {
        "arguments": {"a": "x\ufffd", "b\ufffd": ["\ufffd", {"c": "\U0001f600 ok"}]}
    }
    json.dumps(prepared[1], ensure_ascii=False).encode("utf-8")


def test_null_for_an_optional_argument_is_not_given() -> None:
    """A model writes null for "not given": refused as "None is not of type 'integer'",
    it cost a model call. An optional argument that may not be null is dropped; a
    nullable one keeps its null, and a required one is still refused."""
    nullable = tool_class(
        "nullable",
        {
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"]},
                "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "c": {"type": "string"},
            },
            "additionalProperties": False,
        },
    )
    reg = ToolRegistry()
    reg.register(WeatherTool(), builtin=True)
    reg.register(nullable(), builtin=True)
    assert reg.prepare_call("get_weather", {"city": "Paris", "days": None}) == (
        reg.get("get_weather"),
        {"city": "Paris"},
    )
    assert reg.prepare_call("get_weather", '{"city": "Paris", "days": null}') == (
        reg.get("get_weather"),
        {"city": "Paris"},
    )
    refused = reg.prepare_call("get_weather", {"city": None})
    assert isinstance(refused, str) and "parameter 'city': None is not of type" in refused
    prepared = reg.prepare_call("nullable", {"a": None, "b": None, "c": None})
    assert isinstance(prepared, tuple) and prepared[1] == {"a": None, "b": None}
    refused = reg.prepare_call("nullable", {"d": None})
    assert isinstance(refused, str) and "unexpected parameter 'd'" in refused
