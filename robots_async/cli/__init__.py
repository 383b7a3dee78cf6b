"""The ``robots-async`` command line: one module per command, plus the bulk runner."""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
