"""The base class of every tool: schema, safe argument casting and validation.

Models send sloppy arguments ("3" for 3, "true" for True). Casting fixes only what is
unambiguous; everything else is left for jsonschema to report back to the model, so a
bad call becomes an "Error: ..." result the model can correct instead of a crash.

A class is checked in two steps. Its definition checks only that ``parameters`` is an
object schema; :meth:`Tool.prepare` checks it against JSON Schema 2020-12 and builds the
validator and the wire view, once per class. jsonschema's import and the meta-schema
checks cost ``bot run`` ~30 ms, so the daemon prepares its tools right after ``ready:``
(``ToolRegistry.prepare``), plugins and MCP tools when they are registered, and any use
prepares a class that is not yet.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from bot.agent.toolbox import ToolContext
from bot.errors import UncleanableSchema
from tools.schema import check_schema, clean_schema

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})
_INT_RE = re.compile(r"[+-]?\d+")
_NUM_RE = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_KNOWN_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
_MAX_MESSAGE = 300
_MAX_DEPTH = 32


@functools.cache
def _type_checker() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator.TYPE_CHECKER


def _require_object_schema(owner: str, schema: Any) -> None:
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise TypeError(f"tool {owner}: parameters must be a JSON Schema with type 'object'")


def _build_validator(owner: str, schema: Any) -> Any:
    """The validator of a schema checked against the 2020-12 meta-schema."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        check_schema(schema)
    except SchemaError as exc:
        raise TypeError(f"tool {owner}: invalid parameters schema: {exc.message}") from exc
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


class Tool(ABC):
    """A capability the model can call; subclasses in ``tools/`` are discovered automatically.

    Set ``_plugin_discoverable = False`` on helper classes the loader must not register
    (the flag is inherited, so their subclasses set it back to True).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]
    read_only: ClassVar[bool] = False
    exclusive: ClassVar[bool] = False
    offload_exempt: ClassVar[bool] = False
    _plugin_discoverable: ClassVar[bool] = True
    _validator: ClassVar[Any] = None  # set by prepare()
    # What the model sees: ``parameters`` in the subset every provider accepts (see
    # tools.schema); arguments are still validated against ``parameters`` itself.
    # None until prepare() derives it, unless the class sets its own.
    wire_parameters: ClassVar[dict[str, Any] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "parameters" in cls.__dict__:
            _require_object_schema(cls.__qualname__, cls.parameters)
            cls._validator = None  # not the parent's: this class has its own schema
            if "wire_parameters" not in cls.__dict__:
                cls.wire_parameters = None

    @classmethod
    def require_parameters(cls) -> None:
        """TypeError unless the class has a ``parameters`` schema (an abstract helper
        class may leave it out; registering or preparing one is an error)."""
        if not isinstance(getattr(cls, "parameters", None), Mapping):
            raise TypeError(f"tool {cls.__qualname__} defines no parameters schema")

    @classmethod
    def prepare(cls) -> None:
        """Check ``parameters`` against JSON Schema 2020-12 and build the validator and
        the wire view (once per class); TypeError names the tool when the schema is bad."""
        if cls._validator is not None:
            return
        cls.require_parameters()
        validator = _build_validator(cls.__qualname__, cls.parameters)
        if cls.wire_parameters is None:
            try:
                cls.wire_parameters = clean_schema(cls.parameters).wire
            except UncleanableSchema as exc:
                raise TypeError(f"tool {cls.__qualname__}: {exc}") from exc
        cls._validator = validator

    @property
    def concurrency_safe(self) -> bool:
        """Safe to run alongside other safe calls: no side effects and no exclusivity."""
        return self.read_only and not self.exclusive

    @abstractmethod
    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        """Run the tool with validated keyword arguments.

        Raise ``ToolError`` for expected failures the model should see. The registry passes
        keywords only; ``*args`` lets subclasses declare typed keyword-only parameters
        without mypy override errors.
        """

    def definition(self) -> dict[str, Any]:
        """The OpenAI function-tool definition (a copy, so callers cannot alter the class)."""
        self.prepare()
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": copy.deepcopy(self.wire_parameters),
            },
        }

    def schema_validator(self) -> Any:
        """The cached Draft 2020-12 validator of this tool's parameters."""
        self.prepare()
        return self._validator

    # -- casting -------------------------------------------------------------------------

    def without_null_optionals(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` without the optional arguments sent as null that may not be null:
        a model writes ``"date": null`` for "not given", which the schema refuses and a
        model call then pays for. Null stays where the schema allows it, and for a
        required parameter (its error names it)."""
        props = self.parameters.get("properties")
        if not isinstance(props, Mapping):
            return dict(params)
        required = self.parameters.get("required", ())
        validator = self.schema_validator()
        return {
            key: value
            for key, value in params.items()
            if value is not None
            or key in required
            or key not in props
            or validator.evolve(schema=props[key]).is_valid(None)
        }

    def cast_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Return a copy of ``params`` with unambiguous values cast to their schema types."""
        cast = self._cast(dict(params), self.parameters, 0)
        return cast if isinstance(cast, dict) else dict(params)

    def _cast(self, value: Any, schema: Any, depth: int) -> Any:
        if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
            return value
        ref = schema.get("$ref")
        if isinstance(ref, str):
            value = self._cast(value, self._resolve_ref(ref), depth + 1)
        for sub in schema.get("allOf", ()):
            value = self._cast(value, sub, depth + 1)
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                value = self._cast_branches(value, schema[key], depth + 1)
        types = schema.get("type")
        types = [types] if isinstance(types, str) else types
        if isinstance(types, list):
            value = _cast_scalar(value, [t for t in types if t in _KNOWN_TYPES])
        if isinstance(value, dict):
            props = schema.get("properties")
            props = props if isinstance(props, Mapping) else {}
            extra = schema.get("additionalProperties")
            return {k: self._cast(v, props.get(k, extra), depth + 1) for k, v in value.items()}
        if isinstance(value, list):
            prefix = schema.get("prefixItems")
            prefix = prefix if isinstance(prefix, list) else []
            items = schema.get("items")
            return [
                self._cast(v, prefix[i] if i < len(prefix) else items, depth + 1)
                for i, v in enumerate(value)
            ]
        return value

    def _cast_branches(self, value: Any, branches: list[Any], depth: int) -> Any:
        """Leave a value some branch accepts; otherwise take the first cast that validates."""
        validator = self.schema_validator()
        if any(validator.evolve(schema=b).is_valid(value) for b in branches):
            return value
        for branch in branches:
            candidate = self._cast(value, branch, depth)
            if validator.evolve(schema=branch).is_valid(candidate):
                return candidate
        return value

    def _resolve_ref(self, ref: str) -> Any:
        """Resolve a local ``#/...`` pointer into the tool's own schema (None otherwise)."""
        if not ref.startswith("#"):
            return None
        node: Any = self.parameters
        for part in filter(None, ref[1:].split("/")):
            key = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or key not in node:
                return None
            node = node[key]
        return node

    # -- validation ----------------------------------------------------------------------

    def validate_params(self, params: Mapping[str, Any]) -> list[str]:
        """Every schema violation as a short message naming the parameter path."""
        messages: list[str] = []
        for error in self.schema_validator().iter_errors(dict(params)):
            for message in _describe(error):
                if message not in messages:
                    messages.append(message)
        return sorted(messages, key=_message_rank)  # stable: missing, wrong, unexpected


def _cast_scalar(value: Any, types: list[str]) -> Any:
    if not types:
        return value
    if any(_type_checker().is_type(value, t) for t in types):
        if "integer" in types and "number" not in types and isinstance(value, float):
            return int(value)  # 3.0 is a JSON integer; hand the tool a real int
        return value
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):  # never to "string": 5 for a date is a model error
        return bool(value) if "boolean" in types and value in (0, 1) else value
    if not isinstance(value, str):
        return value
    text = value.strip()
    lowered = text.lower()
    if "integer" in types and _INT_RE.fullmatch(text):
        return int(text)
    if "integer" in types and _NUM_RE.fullmatch(text) and float(text).is_integer():
        return int(float(text))
    if "number" in types and _NUM_RE.fullmatch(text) and math.isfinite(float(text)):
        return int(text) if _INT_RE.fullmatch(text) else float(text)
    if "boolean" in types and lowered in _TRUE | _FALSE:
        return lowered in _TRUE
    if "null" in types and lowered in ("null", "none"):
        return None
    if ("object" in types and text.startswith("{")) or ("array" in types and text.startswith("[")):
        try:
            loaded = json.loads(text)
        except ValueError:
            return value
        if any(_type_checker().is_type(loaded, t) for t in types):
            return loaded
    return value


def _format_path(parts: Iterable[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _shorten(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def _message_rank(message: str) -> int:
    if message.startswith("missing"):
        return 0
    return 2 if message.startswith("unexpected") else 1


def _describe(error: ValidationError) -> list[str]:
    path = _format_path(error.absolute_path)
    instance = error.instance
    if error.validator == "required" and isinstance(instance, dict):
        missing = [p for p in error.validator_value if p not in instance]
        return [f"missing required parameter '{_join(path, p)}'" for p in missing]
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        props = error.schema.get("properties", {})
        patterns = error.schema.get("patternProperties", {})
        extras = [
            k for k in instance if k not in props and not any(re.search(p, k) for p in patterns)
        ]
        if extras:
            return [f"unexpected parameter '{_join(path, k)}'" for k in extras]
    message = error.message
    if error.context:
        from jsonschema.exceptions import best_match

        message += f" (closest match: {best_match(error.context).message})"
    where = f"parameter '{path}'" if path else "arguments"
    return [f"{where}: {_shorten(message)}"]
