"""``python -m robots_async``: the ``robots-async`` command line (see :mod:`robots_async.cli`)."""

from __future__ import annotations

from .cli.main import main

raise SystemExit(main())
