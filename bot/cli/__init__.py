"""The ``bot`` command line: :mod:`bot.cli.launch` is the entry point (a plain ``bot run``
starts there without Typer), :mod:`bot.cli.app` the Typer app, one module per command or
sub-command group, imported only when named.

Empty on purpose: importing :mod:`bot.cli.launch` runs this file first, and ``bot run``
must not load Typer.
"""
