"""The admin page (``/admin`` on the ``[web]`` app): see :mod:`bot.admin.site`."""
