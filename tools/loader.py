"""Finding tools: built-ins by scanning the ``tools`` package, plugins by entry points.

Adding a tool means dropping a ``Tool`` subclass into ``tools/``; no registration code
to edit. Built-ins win every name clash, so a plugin can never shadow or replace one.
A broken built-in fails loudly (it is our bug); a broken plugin is logged and skipped.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import pkgutil
from importlib.metadata import entry_points
from types import ModuleType

from tools.base import Tool
from tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

BUILTIN_PACKAGE = "tools"
PLUGIN_GROUP = "bot.tools"
_SKIP_MODULES = frozenset({"base", "registry", "loader"})


def _is_concrete_tool(obj: object) -> bool:
    return (
        isinstance(obj, type)
        and issubclass(obj, Tool)
        and obj is not Tool
        and not inspect.isabstract(obj)
    )


def _tools_in_module(module: ModuleType) -> list[type[Tool]]:
    """Concrete, discoverable Tool classes defined in (not imported into) ``module``."""
    found: list[type[Tool]] = []
    for obj in vars(module).values():
        if (
            _is_concrete_tool(obj)
            and obj.__module__ == module.__name__
            and obj._plugin_discoverable
            and obj not in found
        ):
            found.append(obj)
    return found


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def discover_builtin(package: str = BUILTIN_PACKAGE) -> list[type[Tool]]:
    """Import every module of ``package`` (except the machinery) and collect its tools."""
    root = importlib.import_module(package)
    found: list[type[Tool]] = []
    for info in pkgutil.iter_modules(getattr(root, "__path__", []), prefix=f"{package}."):
        short = info.name.rpartition(".")[2]
        if short in _SKIP_MODULES or short.startswith("_"):
            continue
        found.extend(_tools_in_module(importlib.import_module(info.name)))
    return found


def discover_plugins(group: str = PLUGIN_GROUP) -> list[type[Tool]]:
    """Tools from installed distributions; an entry point names a Tool class or a module."""
    found: list[type[Tool]] = []
    for ep in entry_points(group=group):
        try:
            obj = ep.load()
        except Exception:
            logger.warning("tool plugin %r (%s) failed to load", ep.name, ep.value, exc_info=True)
            continue
        if isinstance(obj, ModuleType):
            classes = _tools_in_module(obj)
            if not classes:
                logger.warning("tool plugin module %r (%s) defines no tools", ep.name, ep.value)
        elif _is_concrete_tool(obj):
            classes = [obj]
        else:
            logger.warning(
                "tool plugin %r (%s) is neither a concrete Tool subclass nor a module",
                ep.name,
                ep.value,
            )
            continue
        found.extend(cls for cls in classes if cls not in found)
    return found


def build_registry(
    extra_plugins: bool = True,
    *,
    package: str = BUILTIN_PACKAGE,
    group: str = PLUGIN_GROUP,
) -> ToolRegistry:
    """A registry with every built-in tool, then every plugin that does not clash."""
    registry = ToolRegistry()
    for cls in discover_builtin(package):
        registry.register(cls(), builtin=True)
    if extra_plugins:
        for cls in discover_plugins(group):
            _register_plugin(registry, cls)
    logger.info("tools registered: %s", ", ".join(registry.names()))
    return registry


def _register_plugin(registry: ToolRegistry, cls: type[Tool]) -> None:
    name = getattr(cls, "name", None)
    existing = registry.get(name) if isinstance(name, str) else None
    if existing is not None:
        kind = "built-in" if registry.is_builtin(existing.name) else "plugin"
        logger.warning(
            "tool plugin %s skipped: its name %r clashes with %s tool %s",
            _qualname(cls),
            name,
            kind,
            _qualname(type(existing)),
        )
        return
    try:
        cls.prepare()  # a bad schema is the plugin's: it is skipped now, not at a turn
        registry.register(cls(), builtin=False)
    except Exception:
        logger.warning("tool plugin %s could not be registered", _qualname(cls), exc_info=True)
