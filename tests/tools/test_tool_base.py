"""Tool base class: schema check, casting table, validation messages, definition."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from jsonschema.exceptions import SchemaError

from bot.agent.toolbox import FINAL_RESULT, FINAL_RESULT_ACK, ToolContext
from bot.messages import ChatKey
from tools import schema as schema_module
from tools.base import Tool
from tools.final_result import FinalResultTool
from tools.schema import check_schema


def make_tool(schema: dict[str, Any], **attrs: Any) -> Tool:
    async def execute(self: Tool, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        return "ok"

    namespace = {"name": "t", "description": "test tool", "parameters": schema, "execute": execute}
    namespace.update(attrs)
    cls = type("T", (Tool,), namespace)
    return cls()  # type: ignore[no-any-return]


def one(prop: dict[str, Any]) -> Tool:
    return make_tool({"type": "object", "properties": {"v": prop}})


@pytest.mark.parametrize(
    ("prop", "raw", "expected"),
    [
        ({"type": "integer"}, "3", 3),
        ({"type": "integer"}, " -12 ", -12),
        ({"type": "integer"}, "3.0", 3),
        ({"type": "integer"}, 3.0, 3),
        ({"type": "integer"}, "1.5", "1.5"),
        ({"type": "integer"}, "three", "three"),
        ({"type": "number"}, "1.5", 1.5),
        ({"type": "number"}, "2", 2),
        ({"type": "number"}, "1e3", 1000.0),
        ({"type": "number"}, "nan", "nan"),
        ({"type": "number"}, "abc", "abc"),
        ({"type": "boolean"}, "true", True),
        ({"type": "boolean"}, "False", False),
        ({"type": "boolean"}, "1", True),
        ({"type": "boolean"}, "0", False),
        ({"type": "boolean"}, "yes", True),
        ({"type": "boolean"}, "NO", False),
        ({"type": "boolean"}, 1, True),
        ({"type": "boolean"}, "maybe", "maybe"),
        ({"type": "string"}, 42, 42),
        ({"type": "string"}, "3", "3"),
        ({"type": ["integer", "string"]}, "3", "3"),
        ({"type": ["integer", "null"]}, "7", 7),
        ({"type": ["object", "null"]}, "null", None),
        ({"type": "object"}, '{"a": 1}', {"a": 1}),
        ({"type": "array"}, "[1, 2]", [1, 2]),
        ({"type": "array"}, "[oops", "[oops"),
        ({"type": "integer"}, None, None),
        ({"type": "integer"}, True, True),
    ],
)
def test_cast_table(prop: dict[str, Any], raw: Any, expected: Any) -> None:
    result = one(prop).cast_params({"v": raw})["v"]
    assert result == expected
    assert type(result) is type(expected)


def test_cast_recurses_into_objects_and_arrays() -> None:
    tool = make_tool(
        {
            "type": "object",
            "properties": {
                "opts": {
                    "type": "object",
                    "properties": {"days": {"type": "integer"}},
                    "additionalProperties": {"type": "boolean"},
                },
                "ids": {"type": "array", "items": {"type": "integer"}},
                "pair": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "boolean"}]},
            },
        }
    )
    raw = {"opts": {"days": "2", "loud": "yes"}, "ids": ["1", "x"], "pair": ["0.5", "no"], "z": "1"}
    assert tool.cast_params(raw) == {
        "opts": {"days": 2, "loud": True},
        "ids": [1, "x"],
        "pair": [0.5, False],
        "z": "1",
    }
    assert raw["ids"] == ["1", "x"]  # the input is not mutated


def test_cast_follows_ref_and_one_of() -> None:
    tool = make_tool(
        {
            "type": "object",
            "$defs": {"count": {"type": "integer", "minimum": 0}},
            "properties": {
                "n": {"$ref": "#/$defs/count"},
                "when": {"oneOf": [{"type": "integer"}, {"type": "string", "pattern": "^a"}]},
                "keep": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            },
        }
    )
    assert tool.cast_params({"n": "4", "when": "5", "keep": "5"}) == {
        "n": 4,
        "when": 5,
        "keep": "5",
    }


@pytest.mark.parametrize(
    ("prop", "value", "message"),
    [
        ({"type": "string"}, 5, "parameter 'v': 5 is not of type 'string'"),
        ({"enum": ["c", "f"]}, "k", "parameter 'v': 'k' is not one of ['c', 'f']"),
        ({"type": "integer", "minimum": 1}, 0, "parameter 'v': 0 is less than the minimum of 1"),
        (
            {"type": "integer", "maximum": 9},
            10,
            "parameter 'v': 10 is greater than the maximum of 9",
        ),
        ({"type": "string", "minLength": 2}, "a", "parameter 'v': 'a' is too short"),
        ({"type": "string", "maxLength": 2}, "abc", "parameter 'v': 'abc' is too long"),
        (
            {"type": "array", "items": {"type": "integer"}},
            [1, "x"],
            "parameter 'v[1]': 'x' is not of type 'integer'",
        ),
        ({"type": "string", "format": "date"}, "tomorrow", "parameter 'v': 'tomorrow' is not"),
    ],
)
def test_validation_keywords(prop: dict[str, Any], value: Any, message: str) -> None:
    errors = one(prop).validate_params({"v": value})
    assert len(errors) == 1
    assert errors[0].startswith(message)


def test_required_additional_and_nested_paths() -> None:
    tool = make_tool(
        {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "date": {"type": "string"},
                "opts": {
                    "type": "object",
                    "properties": {"unit": {"type": "string"}},
                    "required": ["unit"],
                    "additionalProperties": False,
                },
            },
            "required": ["city", "date"],
            "additionalProperties": False,
        }
    )
    errors = tool.validate_params({"opts": {"x": 1}, "foo": 1})
    assert "missing required parameter 'city'" in errors
    assert "missing required parameter 'date'" in errors
    assert "unexpected parameter 'foo'" in errors
    assert "missing required parameter 'opts.unit'" in errors
    assert "unexpected parameter 'opts.x'" in errors
    assert len(errors) == 5
    assert tool.validate_params({"city": "Paris", "date": "x"}) == []


def test_ref_and_one_of_validation() -> None:
    tool = make_tool(
        {
            "type": "object",
            "$defs": {"unit": {"type": "string", "enum": ["c", "f"]}},
            "properties": {
                "unit": {"$ref": "#/$defs/unit"},
                "at": {"oneOf": [{"type": "integer"}, {"type": "string", "maxLength": 3}]},
            },
        }
    )
    errors = tool.validate_params({"unit": "k", "at": "toolong"})
    assert errors[0] == "parameter 'unit': 'k' is not one of ['c', 'f']"
    assert errors[1].startswith("parameter 'at': 'toolong' is not valid under any")
    assert "closest match" in errors[1]


def test_long_messages_are_shortened() -> None:
    [error] = one({"type": "integer"}).validate_params({"v": "x" * 5000})
    assert len(error) < 350


def test_a_non_object_schema_fails_at_class_definition() -> None:
    with pytest.raises(TypeError, match="type 'object'"):
        make_tool({"type": "string"})


def test_an_invalid_schema_fails_at_prepare_and_at_every_use() -> None:
    """The meta-schema check waits for prepare() (after ready: in the daemon), and a
    tool never prepared is checked by its first use: a bad schema never half-works."""
    tool = make_tool({"type": "object", "properties": {"v": {"type": "no-such-type"}}})
    for use in (type(tool).prepare, tool.definition, lambda: tool.validate_params({"v": 1})):
        with pytest.raises(TypeError, match="tool T: invalid parameters schema"):
            use()


def test_prepare_builds_the_validator_and_wire_view_once() -> None:
    tool = one({"type": ["integer", "null"]})
    cls = type(tool)
    assert cls._validator is None and cls.wire_parameters is None
    cls.prepare()
    validator, wire = cls._validator, cls.wire_parameters
    assert validator is not None and wire is not None
    cls.prepare()
    assert cls._validator is validator and cls.wire_parameters is wire
    assert tool.definition()["function"]["parameters"] == wire


def test_a_subclass_with_its_own_schema_is_prepared_on_its_own() -> None:
    parent = type(one({"type": "integer"}))
    parent.prepare()
    child = type("Child", (parent,), {"parameters": {"type": "object", "properties": {}}})
    assert child._validator is None and child.wire_parameters is None
    assert child().validate_params({"v": "anything"}) == []
    assert parent().validate_params({"v": "x"}) != []


def test_a_schema_is_checked_once_and_a_bad_one_every_time() -> None:
    good = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}
    check_schema(good)
    assert json.dumps(good, sort_keys=True) in schema_module._CHECKED
    check_schema(dict(good))  # equal content: already known
    bad = {"type": "object", "properties": {"n": {"type": "no-such-type"}}}
    for _ in range(2):
        with pytest.raises(SchemaError):
            check_schema(bad)
    assert json.dumps(bad, sort_keys=True) not in schema_module._CHECKED
    with pytest.raises(SchemaError):  # not JSON-like (mixed key types): checked, no memo
        check_schema({"type": "object", "properties": {1: {}, "a": {"type": 3}}})


def test_definition_is_openai_shape_and_a_copy() -> None:
    tool = one({"type": "string"})
    definition = tool.definition()
    assert definition == {
        "type": "function",
        "function": {"name": "t", "description": "test tool", "parameters": tool.parameters},
    }
    definition["function"]["parameters"]["properties"].clear()
    assert tool.parameters["properties"] == {"v": {"type": "string"}}


@pytest.mark.parametrize(
    ("read_only", "exclusive", "safe"),
    [(False, False, False), (True, False, True), (True, True, False), (False, True, False)],
)
def test_concurrency_safe(read_only: bool, exclusive: bool, safe: bool) -> None:
    tool = make_tool({"type": "object"}, read_only=read_only, exclusive=exclusive)
    assert tool.concurrency_safe is safe


def test_abstract_tool_cannot_be_instantiated() -> None:
    class Half(Tool):
        name = "half"
        description = "no execute"
        parameters: ClassVar[dict[str, Any]] = {"type": "object"}

    with pytest.raises(TypeError):
        Half()  # type: ignore[abstract]


async def test_final_result_contract() -> None:
    tool = FinalResultTool()
    assert tool.name == FINAL_RESULT
    assert tool.read_only and tool.offload_exempt and tool.concurrency_safe
    assert "must call" in tool.description.lower()
    ok = {"answer": "Rain tomorrow.", "structured_data": None, "next_actions": ["remind"]}
    assert tool.validate_params(ok) == []
    assert tool.validate_params({"answer": "hi", "structured_data": {"id": 1}}) == []
    assert tool.validate_params({"answer": ""}) == ["parameter 'answer': '' should be non-empty"]
    assert tool.validate_params({}) == ["missing required parameter 'answer'"]
    assert tool.validate_params({"answer": "a", "extra": 1}) == ["unexpected parameter 'extra'"]
    assert tool.validate_params({"answer": "a", "next_actions": [1]}) == [
        "parameter 'next_actions[0]': 1 is not of type 'string'"
    ]
    ctx = ToolContext(chat_key=ChatKey("test", "1"), user_id="u")
    assert await tool.execute(ctx, **ok) == FINAL_RESULT_ACK == "delivered"
