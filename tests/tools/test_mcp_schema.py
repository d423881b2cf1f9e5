"""Schema cleaning for strict providers: every wire schema passes the strict fake
provider's rules (tests/fakes/provider_rules.py), and the check schema still accepts
what the server accepts (null where it allows null)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.fakes.mcp_server import NULLABLE_SCHEMA, RECURSIVE_SCHEMA, REF_SCHEMA, blowup_schema
from tests.fakes.provider_rules import schema_violations
from tools.schema import CleanSchema, UncleanableSchema, clean_schema


def clean(schema: Any) -> CleanSchema:
    result = clean_schema(schema)
    assert schema_violations(result.wire) == [], result.wire
    Draft202012Validator.check_schema(result.check)
    return result


def accepts(result: CleanSchema, value: Any) -> bool:
    return Draft202012Validator(result.check).is_valid(value)


@pytest.mark.parametrize("schema", [{}, None, True, {"properties": {}}, {"type": "object"}])
def test_empty_or_untyped_becomes_an_object_with_properties(schema: Any) -> None:
    assert clean(schema).wire == {"type": "object", "properties": {}}


def test_the_raw_empty_schema_breaks_the_strict_rules() -> None:
    """The checker itself refuses what OpenAI refuses, so the tests above mean something."""
    assert schema_violations({"type": "object"})
    assert schema_violations({"type": "object", "properties": {"a": {"type": ["string", "null"]}}})
    assert schema_violations({"type": "object", "properties": {"a": {"type": "array"}}})


def test_local_refs_are_inlined_and_examples_schema_dropped() -> None:
    result = clean(REF_SCHEMA)
    props = result.wire["properties"]
    assert props["point"] == {"type": "object", "properties": {"x": {"type": "number"}}}
    assert props["tags"] == {"type": "array", "items": {"type": "object", "properties": {}}}
    for view in (result.wire, result.check):
        text = repr(view)
        assert "$ref" not in text and "$defs" not in text and "examples" not in text
        assert "$schema" not in text
    assert accepts(result, {"point": {"x": 1.5}, "tags": ["a", 1]})
    assert not accepts(result, {"point": {"x": "far"}})


def test_a_property_named_like_a_keyword_is_kept() -> None:
    schema = {"type": "object", "properties": {"examples": {"type": "string"}}}
    assert clean(schema).wire["properties"] == {"examples": {"type": "string"}}


def test_nullable_unions_become_the_plain_type_saying_may_be_null() -> None:
    result = clean(NULLABLE_SCHEMA)
    note, count = result.wire["properties"]["note"], result.wire["properties"]["count"]
    assert note == {"type": "string", "description": "A note. May be null."}
    assert count == {"type": "integer", "description": "May be null."}
    assert result.wire["required"] == ["note"]
    # The check view keeps null allowed: the server accepts it, so must we.
    assert accepts(result, {"note": None, "count": None})
    assert accepts(result, {"note": "x", "count": 3})
    assert not accepts(result, {"note": 5})


def test_nullable_spellings_all_agree() -> None:
    spellings = [
        {"type": ["string", "null"]},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"oneOf": [{"type": "null"}, {"type": "string"}]},
        {"type": "string", "nullable": True},
    ]
    wires = [clean({"properties": {"v": s}}).wire["properties"]["v"] for s in spellings]
    assert all(w == {"type": "string", "description": "May be null."} for w in wires)


def test_multi_type_unions_become_any_of() -> None:
    wire = clean({"properties": {"v": {"type": ["string", "integer", "null"]}}}).wire
    assert wire["properties"]["v"] == {
        "anyOf": [{"type": "string"}, {"type": "integer"}],
        "description": "May be null.",
    }


def test_arrays_get_items_and_tuples_become_any_of() -> None:
    wire = clean({"properties": {"a": {"type": "array"}, "t": {"items": [{"type": "string"}]}}})
    assert wire.wire["properties"]["a"]["items"] == {"type": "object", "properties": {}}
    assert wire.wire["properties"]["t"] == {"type": "array", "items": {"type": "string"}}


def test_a_tuple_in_prefix_items_is_shown_as_its_items_not_objects() -> None:
    """pydantic v2's ``tuple[float, float]`` and ``tuple[str, int]``: the wire says what
    the positions hold (it has no per-position form), the check keeps each position."""
    pair = {"type": "number"}
    point = {"type": "array", "prefixItems": [pair, pair], "minItems": 2, "maxItems": 2}
    mixed = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}
    closed = {"type": "array", "prefixItems": [{"type": "string"}], "items": False}
    schema = {"properties": {"point": point, "mixed": mixed, "closed": closed}}
    result = clean(schema)
    props = result.wire["properties"]
    assert props["point"] == {"type": "array", "items": pair, "minItems": 2, "maxItems": 2}
    assert props["mixed"]["items"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert props["closed"] == {"type": "array", "items": {"type": "string"}}
    assert accepts(result, {"point": [1.5, 2], "mixed": ["a", 1], "closed": ["x"]})
    assert not accepts(result, {"point": [{}, {}]})
    assert not accepts(result, {"mixed": [1, "a"]})


def test_unsupported_keywords_are_dropped_or_named_in_the_description() -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "day": {"type": "string", "format": "date", "title": "Day", "default": "today"},
            "level": {"type": "integer", "enum": [1, 2, 3], "minimum": 1},
            "mode": {"const": "fast"},
        },
    }
    result = clean(schema)
    props = result.wire["properties"]
    assert props["day"] == {"type": "string", "description": "Format: date. Default: today."}
    assert props["level"] == {"type": "integer", "minimum": 1, "description": "One of: 1, 2, 3."}
    assert props["mode"] == {"type": "string", "enum": ["fast"]}
    assert not accepts(result, {"level": 4})  # the check view keeps the enum
    assert not accepts(result, {"unknown": 1})  # and additionalProperties


def test_an_object_whose_alternatives_pick_required_fields_stays_an_object() -> None:
    schema = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
        "anyOf": [{"required": ["id"]}, {"required": ["name"]}],
    }
    result = clean(schema)
    assert result.wire == {
        "type": "object",
        "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
    }
    assert accepts(result, {"id": "a"}) and not accepts(result, {})  # the check keeps it


def test_all_of_objects_merge() -> None:
    schema = {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer"}}},
        ]
    }
    wire = clean(schema).wire
    assert set(wire["properties"]) == {"a", "b"} and wire["required"] == ["a"]


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (RECURSIVE_SCHEMA, "recursive $ref"),
        ({"properties": {"a": {"$ref": "https://example.com/s.json"}}}, "outside the schema"),
        ({"properties": {"a": {"$ref": "#/$defs/Missing"}}}, "does not resolve"),
        ({"properties": {"a": False}}, "accepts no value"),
        ({"type": "string"}, "root is not an object"),
        ({"properties": {"a": {"type": "null"}}}, "only be null"),
        ({"properties": {"a": {"type": "date"}}}, "unsupported type"),
        ([1, 2], "not an object"),
    ],
)
def test_uncleanable_schemas_say_why(schema: Any, reason: str) -> None:
    with pytest.raises(UncleanableSchema, match=reason.replace("$", r"\$")):
        clean_schema(schema)


def test_input_is_never_mutated() -> None:
    import copy

    original = copy.deepcopy(REF_SCHEMA)
    clean(REF_SCHEMA)
    assert original == REF_SCHEMA


@pytest.mark.timeout(30)  # without the cap this inlining runs for minutes
def test_branching_refs_are_refused_after_a_bounded_count_of_nodes() -> None:
    schema = blowup_schema(8)  # about 1 KB; 4**8 strings once every $ref is inlined
    assert len(json.dumps(schema)) < 1500
    with pytest.raises(UncleanableSchema, match="more than 10000 nodes"):
        clean_schema(schema)
    assert clean(blowup_schema(5)).wire["properties"]["root"]["type"] == "object"


def test_draft07_forms_are_checked_as_2020_12_says_them() -> None:
    """zod's draft-07 output (a tuple's ``items`` list, a boolean exclusiveMinimum) is not
    valid 2020-12: the check fell back to the wire view and refused null."""
    schema = {
        "properties": {
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
            "size": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
            "note": {"type": ["string", "null"]},
        },
        "required": ["note"],
    }
    result = clean(schema)
    assert accepts(result, {"note": None, "pair": ["a", 1], "size": 0.5})
    assert not accepts(result, {"note": None, "pair": [1, "a"]})  # each position kept
    assert not accepts(result, {"note": None, "size": 0})


def test_a_schema_that_is_not_2020_12_still_allows_null_where_the_model_was_told() -> None:
    """The fallback (the wire view) allows null wherever it says "May be null."."""
    schema = {
        "properties": {
            "note": {"type": ["string", "null"]},
            "odd": {"type": "string", "minLength": "three"},  # no draft's valid form
        },
        "required": ["note"],
    }
    result = clean(schema)
    assert result.wire["properties"]["note"] == {"type": "string", "description": "May be null."}
    assert accepts(result, {"note": None}) and accepts(result, {"note": "x"})
    assert not accepts(result, {"note": 1})
