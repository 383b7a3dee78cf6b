"""How verdicts, usage preferences and fields are printed (text and JSON)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..checker.checker import Decision
    from ..core.results import Verdict
    from ..core.robots import RobotsTxt
    from ..core.usage import UsagePreferences
    from ..fetch.outcome import FetchOutcome


#: The reason of a verdict without a rule, in the few words of a ``check`` line.
_SHORT = {
    "no-match": "no rule matches",
    "no-group": "no group for this agent",
    "robots-txt": "robots.txt itself is always allowed",
    "allow-all": "everything allowed",
    "disallow-all": "everything disallowed",
}


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _print_fields(fields: Sequence[tuple[str, object]]) -> None:
    width = max(len(name) for name, _ in fields) + 2
    for name, value in fields:
        print(f"{name + ':':<{width}}{value}")


def _json(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False)


def _problem(outcome: FetchOutcome) -> str:
    """What went wrong fetching robots.txt: the error kind and detail, or the status."""
    if outcome.error is not None:
        return f"{outcome.error}: {outcome.error_detail}" if outcome.error_detail else outcome.error
    return f"HTTP {outcome.status}"


def _why(verdict: Verdict, decision: Decision | None) -> str:
    """The reason of a verdict in a few words: the rule and line, or robots.txt's fate."""
    if verdict.rule is not None:
        text = f"line {verdict.line}: {verdict.rule}"
        if decision is not None and decision.source == "stale":
            text += f"; robots.txt unreachable ({_problem(decision.outcome)}), last good copy"
        return text
    short = _SHORT.get(verdict.reason, verdict.reason)
    if decision is None or decision.source == "fetched":
        return short
    if decision.source == "unavailable":
        return f"no robots.txt ({_problem(decision.outcome)}): {short}"
    return f"robots.txt unreachable ({_problem(decision.outcome)}): {short}"


def _verdict_record(url: str, verdict: Verdict, decision: Decision | None) -> dict[str, Any]:
    rule = verdict.rule
    outcome = decision.outcome if decision is not None else None
    return {
        "url": url,
        "allowed": verdict.allowed,
        "reason": verdict.reason,
        "rule": rule.pattern if rule is not None else None,
        "line": verdict.line or None,
        "why": _why(verdict, decision),
        "origin": str(decision.origin) if decision is not None else None,
        "source": decision.source if decision is not None else None,
        "status": decision.status if decision is not None else None,
        "error": outcome.error if outcome is not None else None,
    }


def _usage_text(usage: UsagePreferences | None) -> str:
    if usage is None:
        return "none (a URL that may not be fetched has no usage preference)"
    return f"train-ai {usage.train_ai}, search {usage.search}"


def _usage_record(usage: UsagePreferences | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {
        "train-ai": usage.train_ai,
        "search": usage.search,
        "rules": [{"line": rule.line, "rule": str(rule)} for rule in usage.rules],
        "unknown_labels": dict(usage.unknown_labels),
    }


def _counts(robots: RobotsTxt) -> dict[str, int]:
    groups = robots.groups
    return {
        "groups": len(groups),
        "rules": sum(len(group.rules) for group in groups),
        "sitemaps": len(robots.sitemaps),
    }
