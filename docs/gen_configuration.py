"""Write docs/configuration.md from the code: FetchPolicy fields, RobotsChecker
arguments and Scrapy settings, each with its type, default and meaning.

    python docs/gen_configuration.py          # rewrite docs/configuration.md
    python docs/gen_configuration.py --check  # exit 1 if the file is out of date

tests/test_docs.py runs the check, so the reference cannot drift from the code.
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import inspect
import re
import sys
from pathlib import Path

import robots_async

OUTPUT = Path(__file__).resolve().parent / "configuration.md"
_FIELD = re.compile(r"^\s+(\w+): ")
_PARAM = re.compile(r":param (\w+): (.+?)(?=\n\s*:param |\n\s*$|\Z)", re.DOTALL)


#: A reST role (``:class:`RobotsCache```) as it appears in docstrings.
_ROLE = re.compile(r":(?:py:)?\w+:`~?([\w.]+)(?:\(\))?`")


def _code(text: object) -> str:
    """``text`` as inline code in a table cell: HTML, because a Markdown code span
    keeps the backslash of an escaped ``|`` (``int \\| None`` showed as written)."""
    flat = html.escape(" ".join(str(text).split()), quote=False)
    return "<code>" + flat.replace("|", "&#124;") + "</code>"


def _prose(text: object) -> str:
    """A docstring's words for a table cell: reST roles and literals as Markdown code."""
    flat = " ".join(str(text).split())
    flat = _ROLE.sub(lambda m: f"`{m.group(1)}`", flat).replace("``", "`")
    return flat.replace("|", "\\|")


def _name(name: str, section: str) -> str:
    """The first cell: the name, with an anchor of its own (``#ROBOTSASYNC_TIMEOUT``,
    ``#fetchpolicy-max_bytes``) to link to, as Scrapy's settings reference has."""
    anchor = name if name.isupper() else f"{section}-{name}"
    return f'<a id="{anchor}" href="#{anchor}">{_code(name)}</a>'


def _field_comments(cls: type) -> dict[str, str]:
    """The ``#:`` comment lines above each field of a dataclass, by field name."""
    comments: dict[str, str] = {}
    pending: list[str] = []
    for line in inspect.getsource(cls).splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            pending.append(stripped[2:].strip())
            continue
        field = _FIELD.match(line)
        if field and pending:
            comments[field.group(1)] = " ".join(pending)
        if stripped and not stripped.startswith("#"):
            pending = []
    return comments


def fetch_policy_rows() -> list[tuple[str, str, str, str]]:
    """(name, type, default, meaning) of every FetchPolicy field."""
    comments = _field_comments(robots_async.FetchPolicy)
    rows = []
    for field in dataclasses.fields(robots_async.FetchPolicy):
        default = field.default if field.default is not dataclasses.MISSING else ""
        meaning = comments.get(field.name, "")
        rows.append((field.name, str(field.type), repr(default), meaning))
    return rows


def checker_rows() -> list[tuple[str, str, str, str]]:
    """(name, type, default, meaning) of every RobotsChecker argument."""
    doc = inspect.getdoc(robots_async.RobotsChecker) or ""
    meanings = dict(_PARAM.findall(doc))
    rows = []
    signature = inspect.signature(robots_async.RobotsChecker.__init__)
    for name, parameter in signature.parameters.items():
        if name == "self":
            continue
        default = "" if parameter.default is inspect.Parameter.empty else parameter.default
        shown = getattr(default, "__qualname__", None) or repr(default)
        rows.append(
            (
                name,
                str(parameter.annotation),
                shown if default != "" else "required",
                meanings.get(name, ""),
            )
        )
    return rows


def scrapy_rows() -> list[tuple[str, str, str, str]]:
    """(name, type, default, meaning) of every setting the Scrapy middleware reads."""
    from robots_async.contrib import scrapy as adapter

    return [(s.name, s.type, repr(s.default), s.meaning) for s in adapter.SETTINGS]


def _table(rows: list[tuple[str, str, str, str]], first: str, section: str) -> list[str]:
    lines = [f"| {first} | type | default | meaning |", "|---|---|---|---|"]
    lines += [
        f"| {_name(n, section)} | {_code(t)} | {_code(d)} | {_prose(m)} |" for n, t, d, m in rows
    ]
    return lines


def render() -> str:
    """The whole configuration reference page."""
    lines = [
        "# Configuration reference",
        "",
        "Generated from the code by `python docs/gen_configuration.py`; a test fails",
        "when it is out of date. Every value is validated when the object is created:",
        "a bad one raises `ConfigurationError` (a `ValueError`) naming the setting, the value",
        "and what is accepted.",
        "",
        "## FetchPolicy",
        "",
        "How robots.txt is fetched and what each outcome means (`fetch_policy=`).",
        "Presets: `FetchPolicy.rfc9309()` (the default), `.googlebot()`, `.yandex()`,",
        "`.legacy_allow_on_error()`; each takes the fields below as keyword arguments.",
        "",
        *_table(fetch_policy_rows(), "field", "fetchpolicy"),
        "",
        "## RobotsChecker",
        "",
        "`RobotsChecker(user_agent, **options)`:",
        "",
        *_table(checker_rows(), "argument", "robotschecker"),
        "",
        "## Scrapy settings",
        "",
        "Read by `robots_async.contrib.scrapy.RobotsTxtMiddleware` (and, for the",
        "parsing ones, by the `RobotParser` backend). A bad value stops the crawl at",
        "startup; `ROBOTSTXT_OBEY = False` is the only way to turn the middleware off.",
        "",
        *_table(scrapy_rows(), "setting", "scrapy"),
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    """Write the page, or with --check compare it with the file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is stale")
    args = parser.parse_args()
    text = render()
    if args.check:
        if OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT} is out of date: run python docs/gen_configuration.py")
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
