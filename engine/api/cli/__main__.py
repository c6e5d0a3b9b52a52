"""``python -m lockgate.engine.api.cli``: the ``lockgate`` command."""

from lockgate.engine.api.cli import main

raise SystemExit(main())
