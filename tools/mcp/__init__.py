"""Tools from Model Context Protocol servers (stdio children and streamable HTTP).

:mod:`~tools.mcp.manager` owns the servers and puts their tools in the registry;
:mod:`~tools.mcp.server` is one server's connection, state and counters;
:mod:`~tools.schema` cleans input schemas for strict providers.
"""
