"""``robots-async explain``: why a URL is allowed or not, and where the rules came from."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..core.url import Origin
from .common import _agent, _checker, _judged, _load_robots, _setup_logging
from .options import _EPILOG, EXIT_NEGATIVE, EXIT_OK, _add_json, _add_store
from .output import (
    _json,
    _print_fields,
    _problem,
    _usage_record,
    _usage_text,
    _verdict_record,
    _when,
    _yes,
)

if TYPE_CHECKING:
    import argparse

    from ..checker.checker import Decision
    from ..core.results import Verdict
    from ..core.usage import UsagePreferences

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``explain``."""
    explain = sub.add_parser("explain", help="why is a URL allowed or not?", epilog=_EPILOG)
    explain.add_argument(
        "url",
        metavar="URL",
        help="absolute http(s) URL (with --robots: or a /path); its robots.txt is fetched",
    )
    explain.add_argument("--robots", metavar="FILE", help="use this robots.txt ('-': stdin)")
    _add_store(explain)
    _add_json(explain)
    explain.set_defaults(handler=_cmd_explain)


_REASONS = {
    "allow": "the deciding rule allows the URL",
    "disallow": "the deciding rule disallows the URL",
    "empty-rule": "only an empty Allow/Disallow matched, which allows everything",
    "no-match": "no rule of the agent's groups matches the URL",
    "no-group": "no group applies to this agent",
    "robots-txt": "/robots.txt itself is always allowed",
    "allow-all": "no robots.txt in force (unavailable): everything is allowed",
    "disallow-all": "robots.txt unreachable: everything is disallowed",
}


async def _explain_remote(args: argparse.Namespace, url: str) -> Decision:
    async with _checker(args) as checker:
        return await checker.explain(url)


def _explain_fields(verdict: Verdict, usage: UsagePreferences | None) -> list[tuple[str, object]]:
    rule = "none" if verdict.rule is None else f"line {verdict.line}: {verdict.rule}"
    usage_rules = ", ".join(f"line {r.line}: {r}" for r in usage.rules) if usage else ""
    return [
        ("verdict", "allowed" if verdict.allowed else "DISALLOWED"),
        ("rule", rule),
        ("user agents", ", ".join(verdict.agents) or "none"),
        ("token", verdict.token),
        ("reason", f"{verdict.reason}: {_REASONS.get(verdict.reason, verdict.reason)}"),
        ("usage", _usage_text(usage)),
        ("usage rule", usage_rules or "none"),
    ]


def _provenance_fields(decision: Decision) -> list[tuple[str, object]]:
    outcome = decision.outcome
    status = outcome.status if outcome.status is not None else f"none ({_problem(outcome)})"
    return [
        ("robots.txt", decision.origin.robots_url),
        ("status", status),
        ("source", decision.source),
        ("from cache", _yes(decision.from_cache)),
        ("fetched at", _when(decision.fetched_at)),
        ("expires at", _when(decision.expires_at)),
    ]


def _explain_record(
    url: str, verdict: Verdict, decision: Decision | None, usage: UsagePreferences | None
) -> dict[str, Any]:
    record = _verdict_record(url, verdict, decision)
    record.update(
        agents=list(verdict.agents),
        token=verdict.token,
        usage=_usage_record(usage),
        robots_url=None,
    )
    if decision is not None:
        record.update(
            robots_url=decision.origin.robots_url,
            from_cache=decision.from_cache,
            fetched_at=_when(decision.fetched_at),
            expires_at=_when(decision.expires_at),
        )
    return record


def _cmd_explain(args: argparse.Namespace) -> int:
    token = _agent(args)
    url: str = args.url
    if not (args.robots is not None and url.startswith("/")):
        Origin.from_url(url)
    _setup_logging(args.verbose)
    decision: Decision | None = None
    if args.robots is not None:
        robots = _load_robots(args.robots, args.policy)
        judged = _judged(url)  # the URL sent, as the remote explain judges it
        verdict = robots.explain(judged, robots_token=token)
        usage = robots.usage(judged, robots_token=token)
    else:
        decision = asyncio.run(_explain_remote(args, url))
        verdict, usage = decision.verdict, decision.usage
    if args.json:
        print(_json(_explain_record(url, verdict, decision, usage)))
    else:
        fields = [("URL", url), *_explain_fields(verdict, usage)]
        _print_fields(fields + (_provenance_fields(decision) if decision else []))
    return EXIT_OK if verdict.allowed else EXIT_NEGATIVE
