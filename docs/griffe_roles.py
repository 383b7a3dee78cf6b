"""Griffe extension for the API reference: reST roles in docstrings become links.

The package's docstrings use Sphinx roles (``:class:`RobotsCache```), which
mkdocstrings prints as written. Each role becomes an optional autorefs
cross-reference: a link when the target is on a page of the site, plain code
otherwise (so the build never fails on a name that is not documented).
Double-backtick literals become Markdown code. The package itself is not changed.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

#: ``:role:`target``` and ``:role:`~shown.target```, for the Python domain's roles.
ROLE = re.compile(
    r":(?:py:)?(?:class|meth|func|attr|data|exc|mod|obj|const):`(~?)([\w.]+)(?:\(\))?`"
)
#: ``literal`` (reST) -> `literal` (Markdown); a lone backtick pair is left alone.
LITERAL = re.compile(r"``([^`]+)``")


def _identifier(obj: griffe.Object, target: str) -> str:
    """The full path ``target`` names from ``obj``'s scope, else a best guess."""
    head, _, rest = target.lstrip(".").partition(".")
    try:
        path = obj.resolve(head)
    except (griffe.NameResolutionError, KeyError, AttributeError):
        return target if target.startswith("robots_async") else f"robots_async.{target}"
    return f"{path}.{rest}" if rest else path


def convert(obj: griffe.Object, text: str) -> str:
    """``text`` with every role a cross-reference and every reST literal Markdown."""

    def link(match: re.Match[str]) -> str:
        short, target = match.group(1), match.group(2)
        shown = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
        identifier = html.escape(_identifier(obj, target), quote=True)
        code = f"<code>{html.escape(shown)}</code>"
        return f'<autoref identifier="{identifier}" optional>{code}</autoref>'

    return LITERAL.sub(r"`\1`", ROLE.sub(link, text))


class ReSTRoles(griffe.Extension):
    """Rewrites the docstrings of every object of a loaded package (see module doc)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Walk the package once it is loaded (names resolve then)."""
        seen: set[str] = set()
        stack: list[griffe.Object] = [pkg]
        while stack:
            obj = stack.pop()
            if obj.path in seen:
                continue
            seen.add(obj.path)
            if obj.docstring is not None:
                obj.docstring.value = convert(obj, obj.docstring.value)
            stack.extend(m for m in obj.members.values() if not m.is_alias)
