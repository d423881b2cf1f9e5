"""Cleaning a tool's input schema for strict providers (a pure function).

Every tool's definition goes through it: the built-ins' own schemas use type lists for
nullable values and ``additionalProperties``, which Gemini refuses. MCP servers advertise
whatever JSON Schema their framework emits: ``{}``, ``$ref`` into
``$defs``, ``anyOf`` with ``null``, ``type: ["string", "null"]``, arrays without
``items``, ``examples``. Providers each reject part of that (OpenAI: an object without
``properties``; Gemini: type lists, arrays without ``items``, ``examples``, ``$ref``).
A tuple (``prefixItems``, pydantic's ``tuple[float, float]``) has no per-position form
there: its ``items`` is the positions' shared schema, else ``anyOf`` them.
:func:`clean_schema` returns two views of one schema:

- ``wire``, what the model sees: the subset every provider accepts, whatever path the
  request takes (litellm converts for Gemini's native API, but not for an
  OpenAI-compatible endpoint in front of Gemini or a proxy). Nullability is the one
  thing that subset cannot spell (``"nullable": true`` is Gemini-only, type lists and
  ``{"type": "null"}`` are refused by Gemini), so a nullable value is its plain non-null
  type with "May be null." in its description. Dropped constraints (``format``,
  ``pattern``, ``default``, non-string ``enum``) are named in the description instead.
- ``check``, what arguments are validated against before the server sees them: the
  same schema with ``$ref`` inlined but nullability and constraints kept, so a model
  that sends ``null`` where the server allows it is not refused.

A schema that cannot be expressed (a recursive or remote ``$ref``, ``false``, a root
that is not an object, an unknown type) raises :class:`UncleanableSchema`, and so does
one whose inlined form would pass :data:`MAX_NODES` schema nodes: ``$ref``s that branch
(each definition referring to the next several times) grow exponentially when inlined,
so 1 KB of schema could otherwise hold the event loop for minutes. The count stops the
inlining as soon as it passes the cap, so the work per tool is bounded whatever it sends.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.errors import UncleanableSchema

__all__ = ["CleanSchema", "UncleanableSchema", "check_schema", "clean_schema"]

MAX_DEPTH = 32
MAX_NODES = 10_000  # schema nodes in the inlined view; real tools use a few hundred
WIRE_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
# Kept on the wire as they are; every other keyword is dropped (or named in the text).
_KEPT = ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")
_NOTED = ("format", "pattern", "default")
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string"}
_DROPPED_FOR_CHECK = ("$schema", "$id", "$comment", "examples", "example", "$defs", "definitions")
# Where JSON Schema nests schemas: maps of them, lists of them, and single ones.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems", "items"})
_SCHEMA_VALUES = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "not",
        "contains",
        "if",
        "then",
        "else",
        "propertyNames",
    }
)
_CHECKED: set[str] = set()  # schemas that passed check_schema, as canonical JSON
_MAX_CHECKED = 4096


def check_schema(schema: Mapping[str, Any]) -> None:
    """``Draft202012Validator.check_schema``, once per distinct schema in this process.

    Checking against the 2020-12 meta-schema is the slow part of defining a tool (every
    start defines them all), and a tool's parameters and their check view are usually
    the same schema. Raises :class:`SchemaError` as the validator does.
    """
    from jsonschema import Draft202012Validator  # imported by the first check, not at start

    try:
        key = json.dumps(schema, sort_keys=True, default=repr)
    except (TypeError, ValueError):  # not JSON-like (mixed key types, a cycle): no memo
        Draft202012Validator.check_schema(schema)
        return
    if key in _CHECKED:
        return
    Draft202012Validator.check_schema(schema)
    if len(_CHECKED) < _MAX_CHECKED:
        _CHECKED.add(key)


@dataclass(frozen=True, slots=True)
class CleanSchema:
    wire: dict[str, Any]
    check: dict[str, Any]


def clean_schema(schema: Any) -> CleanSchema:
    """Both views of ``schema`` (see the module docstring); never mutates its argument."""
    if schema is None or schema is True:
        schema = {}
    if not isinstance(schema, Mapping):
        raise UncleanableSchema(f"the input schema is not an object (got {_kind(schema)})")
    inlined = _Inliner(schema).inline(schema, (), 0)
    wire = _wire(inlined, 0)
    if wire.get("type") != "object":
        raise UncleanableSchema("the input schema's root is not an object")
    return CleanSchema(wire=wire, check=_check_view(inlined, wire))


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


# -- step 1: inline local $refs --------------------------------------------------------


class _Inliner:
    """Replaces every ``$ref`` by its target (siblings win), counting the nodes made."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.nodes = 0

    def inline(self, node: Any, stack: tuple[str, ...], depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise UncleanableSchema(f"the schema nests deeper than {MAX_DEPTH} levels")
        if not isinstance(node, Mapping):
            return node
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise UncleanableSchema(
                f"the schema inlines to more than {MAX_NODES} nodes ($refs that branch)"
            )
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in stack:
                raise UncleanableSchema(f"recursive $ref {ref!r} cannot be inlined")
            target = self.inline(_resolve(ref, self.root), (*stack, ref), depth + 1)
            siblings = self.inline({k: v for k, v in node.items() if k != "$ref"}, stack, depth)
            return {**target, **siblings} if isinstance(target, Mapping) else target
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED_FOR_CHECK:
                continue
            if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                out[key] = {k: self.inline(v, stack, depth + 1) for k, v in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self.inline(v, stack, depth + 1) for v in value]
            elif key in _SCHEMA_VALUES:
                out[key] = self.inline(value, stack, depth + 1)
            else:
                out[key] = value
        return out


def _resolve(ref: str, root: Mapping[str, Any]) -> Any:
    if not ref.startswith("#"):
        raise UncleanableSchema(f"$ref {ref!r} points outside the schema")
    node: Any = root
    for part in filter(None, ref[1:].split("/")):
        key = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or key not in node:
            raise UncleanableSchema(f"$ref {ref!r} does not resolve")
        node = node[key]
    return True if node is True else node


# -- step 2: the wire view -------------------------------------------------------------


def _wire(node: Any, depth: int) -> dict[str, Any]:
    """One node in the common subset. ``nullable`` travels in the description."""
    if depth > MAX_DEPTH:
        raise UncleanableSchema(f"the schema nests deeper than {MAX_DEPTH} levels")
    if node is True or node is None:
        node = {}
    if node is False:
        raise UncleanableSchema("a 'false' schema accepts no value")
    if not isinstance(node, Mapping):
        raise UncleanableSchema(f"a schema node is {_kind(node)}, not an object")
    node, nullable = _without_null(_merged_all_of(dict(node)))
    any_of, one_of = node.pop("anyOf", None), node.pop("oneOf", None)
    union = any_of or one_of  # oneOf is refused by Gemini; anyOf says nearly the same
    if node.get("type") == "object" and isinstance(node.get("properties"), Mapping):
        union = None  # an object whose alternatives pick required fields: the check enforces
    if isinstance(union, list) and union:
        if len(union) == 1:  # a single branch is the node itself, with its siblings
            merged = _wire({**node, **_as_dict(union[0])}, depth + 1)
            return _note(merged, nullable=nullable)
        branches = [_wire({**_shared(node), **_as_dict(b)}, depth + 1) for b in union]
        return _note({"anyOf": branches}, node, nullable=nullable)
    kind = node.get("type", _implied_type(node))
    if not isinstance(kind, str) or kind not in WIRE_TYPES:
        raise UncleanableSchema(f"unsupported type {kind!r}")
    out: dict[str, Any] = {"type": kind}
    if kind == "object":
        props = node.get("properties")
        props = props if isinstance(props, Mapping) else {}
        out["properties"] = {str(k): _wire(v, depth + 1) for k, v in props.items()}
        required = [r for r in node.get("required") or () if r in out["properties"]]
        if required:
            out["required"] = required
    elif kind == "array":
        items = node.get("items")
        prefix = node.get("prefixItems")
        if isinstance(items, list):  # the old tuple form: any of the listed shapes
            items = _tuple_items(items)
        elif items in (None, False) and isinstance(prefix, list):  # 2020-12's tuple form
            items = _tuple_items(prefix)
        out["items"] = _wire(items, depth + 1)
    out.update((k, node[k]) for k in _KEPT if isinstance(node.get(k), int | float))
    return _note(out, node, nullable=nullable)


def _tuple_items(shapes: list[Any]) -> Any:
    """A tuple's positions as one ``items`` (the wire has no per-position form, the check
    view keeps it): their shared shape when all are one (``tuple[float, float]``), else
    any of them."""
    if not shapes:
        return {}
    first = shapes[0]
    if all(shape == first for shape in shapes[1:]):
        return first
    return {"anyOf": shapes}


def _implied_type(node: Mapping[str, Any]) -> str:
    """The type a node without one implies: its items, its enum's values, else object."""
    if "items" in node or "prefixItems" in node:
        return "array"
    values = node.get("enum")
    if isinstance(values, list) and values:
        kinds = {_JSON_TYPES.get(type(v), "string") for v in values}
        return kinds.pop() if len(kinds) == 1 else "string"
    return "object"


def _as_dict(branch: Any) -> dict[str, Any]:
    if branch is True or branch is None:
        return {}
    if not isinstance(branch, Mapping):
        raise UncleanableSchema(f"a union branch is {_kind(branch)}, not a schema")
    return dict(branch)


def _shared(node: Mapping[str, Any]) -> dict[str, Any]:
    """What a union's siblings give every branch (a shared type, properties)."""
    return {k: v for k, v in node.items() if k not in ("description", "title", *_NOTED)}


def _merged_all_of(node: dict[str, Any]) -> dict[str, Any]:
    """``allOf`` of objects becomes one object; other allOfs keep their first branch's type."""
    parts = node.pop("allOf", None)
    if not isinstance(parts, list):
        return node
    for branch in parts:
        part = _as_dict(branch)
        if "type" in part and "type" in node and part["type"] != node["type"]:
            raise UncleanableSchema("allOf combines different types")
        props = {**(node.get("properties") or {}), **(part.get("properties") or {})}
        required = [*(node.get("required") or ()), *(part.get("required") or ())]
        node = {**part, **node}
        if props:
            node["properties"] = props
        if required:
            node["required"] = list(dict.fromkeys(required))
    return node


def _without_null(node: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Drop every spelling of "or null"; the flag says whether there was one."""
    nullable = node.pop("nullable", False) is True
    kind = node.get("type")
    if isinstance(kind, list):
        rest = [t for t in kind if t != "null"]
        nullable = nullable or len(rest) < len(kind)
        if not rest:
            raise UncleanableSchema("a value that can only be null")
        if len(rest) == 1:
            node["type"] = rest[0]
        else:
            del node["type"]
            node["anyOf"] = [{"type": t} for t in rest]
    elif kind == "null":
        raise UncleanableSchema("a value that can only be null")
    for key in ("anyOf", "oneOf"):
        union = node.get(key)
        if isinstance(union, list):
            rest = [b for b in union if not (isinstance(b, Mapping) and b.get("type") == "null")]
            nullable = nullable or len(rest) < len(union)
            if not rest:
                raise UncleanableSchema("a value that can only be null")
            node[key] = rest
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if isinstance(node.get("enum"), list):
        values = node["enum"]
        nullable = nullable or None in values
        node["enum"] = [v for v in values if v is not None]
    return node, nullable


def _note(
    out: dict[str, Any], node: Mapping[str, Any] | None = None, *, nullable: bool
) -> dict[str, Any]:
    """The description, plus what the wire cannot say (enums, formats, null)."""
    node = node or {}
    text = node.get("description") if isinstance(node.get("description"), str) else ""
    notes: list[str] = []
    values = node.get("enum")
    if isinstance(values, list) and values:
        if out.get("type") == "string" and all(isinstance(v, str) for v in values):
            out["enum"] = list(values)
        else:
            notes.append("One of: " + ", ".join(json.dumps(v) for v in values) + ".")
    for key in _NOTED:
        value = node.get(key)
        if value is not None:
            shown = value if isinstance(value, str) else json.dumps(value, default=str)
            notes.append(f"{key.capitalize()}: {shown}.")
    if nullable:
        notes.append("May be null.")
    text = text or out.get("description", "")
    if text and notes and not text.rstrip().endswith((".", "!", "?", ":")):
        text = text.rstrip() + "."
    full = " ".join(part for part in (text, *notes) if part)
    if full:
        out["description"] = full
    return out


# -- step 3: the check view ------------------------------------------------------------


def _check_view(inlined: Mapping[str, Any], wire: dict[str, Any]) -> dict[str, Any]:
    """The inlined schema with an object root, draft-07's spellings in 2020-12's; when
    it is still not valid 2020-12, the wire view, allowing null where it says so."""
    check: dict[str, Any] = _as_2020_12(copy.deepcopy(dict(inlined)), 0)
    if "type" not in check and not any(k in check for k in ("anyOf", "oneOf", "allOf")):
        check["type"] = "object"
    check.setdefault("properties", {})
    from jsonschema.exceptions import SchemaError

    try:
        check_schema(check)
    except SchemaError:
        return _fallback(wire)
    return check if check.get("type") == "object" else _fallback(wire)


def _fallback(wire: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = _nullable_where_said(copy.deepcopy(wire), root=True)
    return out


def _as_2020_12(node: Any, depth: int) -> Any:
    """Draft-07's forms, which 2020-12 refuses (zod and older emitters still write them),
    rewritten in place: a tuple's ``items`` list (and ``additionalItems``), boolean
    ``exclusiveMinimum``/``exclusiveMaximum``, ``dependencies``."""
    if not isinstance(node, dict) or depth > MAX_DEPTH:
        return node
    items = node.get("items")
    if isinstance(items, list):
        node["prefixItems"] = items
        del node["items"]
        if "additionalItems" in node:
            node["items"] = node.pop("additionalItems")
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = node.get(exclusive)
        if isinstance(flag, bool):
            del node[exclusive]
            if flag and isinstance(node.get(bound), int | float):
                node[exclusive] = node.pop(bound)
    dependencies = node.pop("dependencies", None)
    if isinstance(dependencies, dict):
        for key, value in dependencies.items():
            kind = "dependentRequired" if isinstance(value, list) else "dependentSchemas"
            node.setdefault(kind, {})[key] = value
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            for sub in value.values():
                _as_2020_12(sub, depth + 1)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            for sub in value:
                _as_2020_12(sub, depth + 1)
        elif key in _SCHEMA_VALUES:
            _as_2020_12(value, depth + 1)
    return node


def _nullable_where_said(node: Any, *, root: bool = False) -> Any:
    """The wire view as a check: null is allowed wherever the model was told "May be
    null." (the wire cannot say it otherwise, and a refusal would contradict it)."""
    if isinstance(node, list):
        return [_nullable_where_said(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _nullable_where_said(v) for name, v in value.items()}
        elif key in ("items", "anyOf"):  # the only other places the wire nests schemas
            out[key] = _nullable_where_said(value)
        else:
            out[key] = value
    said = out.get("description")
    if not root and isinstance(said, str) and said.endswith("May be null."):
        return {"anyOf": [out, {"type": "null"}]}
    return out
