"""The house rules that keep adding a platform or a tool a local change."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from channels.base import Channel
from channels.registry import SPECS

ROOT = Path(__file__).resolve().parent.parent
PLATFORMS = re.compile(r"telegram|slack|discord", re.IGNORECASE)
# The composition root (its agent side built after ready: is bot/app_agent.py) is the one
# place in bot/ allowed to name concrete platforms and tools.
WIRING = {"bot/app.py", "bot/app_agent.py"}


def _python(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_bot_names_no_platform() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in _python("bot")
        if str(path.relative_to(ROOT)) not in WIRING
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PLATFORMS.search(line)
    ]
    assert not offenders, "bot/ names a platform outside the composition root:\n" + "\n".join(
        offenders
    )


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_who_may_import_whom() -> None:
    def offenders(folder: str, forbidden: tuple[str, ...], allowed: set[str]) -> list[str]:
        return [
            f"{path.relative_to(ROOT)} imports {module}"
            for path in _python(folder)
            if str(path.relative_to(ROOT)) not in allowed
            for module in _imports(path)
            if module.startswith(forbidden)
        ]

    assert not offenders("channels", ("tools",), set())
    assert not offenders("tools", ("channels",), set())
    # bot/ reaches channels only through the contract and the registry, tools only via app.
    concrete = ("channels.telegram", "channels.slack", "channels.discord", "channels.cli")
    assert not offenders("bot", concrete, WIRING)
    assert not offenders("bot", ("tools",), WIRING)


def test_channel_adapters_never_see_the_bus_or_the_store() -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in _python("channels")
        for module in _imports(path)
        if module.startswith(("bot.bus", "bot.store", "bot.dispatcher", "aiosqlite"))
    ]
    assert not bad


def test_every_platform_package_exports_a_complete_spec() -> None:
    names = [spec.name for spec in SPECS]
    assert names == sorted(set(names), key=names.index)  # unique
    packages = {p.name for p in (ROOT / "channels").iterdir() if (p / "__init__.py").exists()}
    assert set(names) == packages  # one registry line per package, no package left out
    for spec in SPECS:
        section = spec.settings()
        assert spec.enabled(section) is False  # no token: off
        assert spec.doctor is not None and spec.example.startswith(f"[channels.{spec.name}]")
        assert all(s.get_secret_value() == "" for s in spec.secrets(section))


def test_channel_contract_is_small() -> None:
    members = {m for m in vars(Channel) if not m.startswith("_")}
    assert members <= {"name", "trusted", "connected", "start", "send", "stop"}


def test_litellm_environment_is_set_in_one_place() -> None:
    """litellm reads its offline switches at import; one module sets them, right before."""
    setters = [
        str(path.relative_to(ROOT))
        for folder in ("bot", "channels", "tools")
        for path in _python(folder)
        if "LITELLM_LOCAL_MODEL_COST_MAP" in path.read_text(encoding="utf-8")
    ]
    assert setters == ["bot/agent/llm/loader.py"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere (top, function, TYPE_CHECKING)."""
    paths = {_module_name(p): p for folder in ("bot", "channels", "tools") for p in _python(folder)}

    def project_module(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                package = name if path.name == "__init__.py" else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = ".".join(p for p in (package if node.level else "", node.module) if p)
                targets.update(project_module(f"{base}.{a.name}") for a in node.names)
            elif isinstance(node, ast.Import):
                targets.update(project_module(a.name) for a in node.names)
        graph[name] = {t for t in targets if t and t != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    """Not even through an import inside a function or under TYPE_CHECKING: a cycle there
    is one refactor away from a crash at import, and it blurs who depends on whom."""
    assert _cycles(_import_graph()) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
