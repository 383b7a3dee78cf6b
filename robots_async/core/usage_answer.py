"""One usage answer from every opt-out signal, each source named (issue 29).

Sources, mapped onto the aipref vocabulary's labels (docs/opt-outs.md has the table):

========================  ===========================================================
robots.txt Content-Usage  each category as stated (``y``/``n``); other labels kept
robots.txt Content-Signal ``ai-train`` -> ``train-ai``, ``search`` -> ``search``,
                          ``ai-input`` -> ``ai-use``; other labels kept as written
TDMRep                    reservation 1 -> ``train-ai`` disallowed, 0 -> allowed; the
                          response's header/meta overrides the origin's file (TDMRep
                          §4); a file that could not be read -> ``train-ai`` unknown
page directives           ``noai`` -> ``train-ai`` disallowed, ``noindex`` -> ``search``
                          disallowed
Content-Usage header      each category as stated
========================  ===========================================================

Per label the most restrictive wins: disallowed, then unknown *from a source that
failed* (a TDMRep file we could not read: never read as "not reserved"), then allowed.
A label no source speaks of is absent (``get`` answers "unknown").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from .content_signals import ContentSignals
    from .page_directives import PageDirectives
    from .tdmrep import TdmAnswer
    from .usage import Preference, UsagePreferences

__all__ = ["SIGNAL_LABELS", "SourceName", "UsageAnswer", "UsageSource", "combine_sources"]

#: Where a statement came from.
SourceName = Literal[
    "robots-content-usage",
    "robots-content-signal",
    "tdmrep-file",
    "tdmrep-page",
    "page-directives",
    "content-usage-header",
]
#: Content-Signal labels and the aipref label each means (contentsignals.org defines
#: ai-train as training or fine-tuning, ai-input as input to AI answers: vocab -08's
#: train-ai and ai-use).
SIGNAL_LABELS: Final[dict[str, str]] = {
    "ai-train": "train-ai",
    "search": "search",
    "ai-input": "ai-use",
}
_RANK: Final[dict[str, int]] = {"allowed": 1, "unknown": 2, "disallowed": 3}
_YN: Final[dict[str, Preference]] = {"y": "allowed", "n": "disallowed"}


@dataclass(frozen=True, slots=True)
class UsageSource:
    """One source's statement about one label, and what it saw (a line, a value)."""

    source: SourceName
    label: str
    value: Preference
    detail: str = ""


@dataclass(frozen=True, slots=True)
class UsageAnswer:
    """The combined usage answer: per label the most restrictive value, and every
    statement that went into it."""

    labels: tuple[tuple[str, Preference], ...] = ()
    sources: tuple[UsageSource, ...] = ()

    def get(self, label: str) -> Preference:
        """The combined value for ``label`` ("unknown" when no source speaks of it)."""
        for name, value in self.labels:
            if name == label:
                return value
        return "unknown"

    def disallows(self, label: str) -> bool:
        """True if any source disallows ``label``."""
        return self.get(label) == "disallowed"

    def refusing(self, labels: tuple[str, ...] | list[str]) -> tuple[UsageSource, ...]:
        """The statements that disallow any of ``labels``: why a response is refused."""
        wanted = set(labels)
        return tuple(s for s in self.sources if s.label in wanted and s.value == "disallowed")


def combine_sources(
    *,
    robots_usage: UsagePreferences | None = None,
    signals: ContentSignals | None = None,
    tdm_file: TdmAnswer | None = None,
    page: PageDirectives | None = None,
    header_usage: UsagePreferences | None = None,
) -> UsageAnswer:
    """Combine whatever sources are given (None: not consulted) into one answer."""
    found: list[UsageSource] = []
    if robots_usage is not None:
        found += _from_usage("robots-content-usage", robots_usage)
    if signals is not None:
        found += _from_signals(signals)
    found += _from_tdm(tdm_file, page)
    if page is not None:
        found += _from_page(page)
    if header_usage is not None:
        found += _from_usage("content-usage-header", header_usage)
    combined: dict[str, Preference] = {}
    for statement in found:
        held = combined.get(statement.label)
        if held is None or _RANK[statement.value] > _RANK[held]:
            combined[statement.label] = statement.value
    return UsageAnswer(tuple(combined.items()), tuple(found))


def _from_usage(name: SourceName, usage: UsagePreferences) -> list[UsageSource]:
    detail = "; ".join(str(rule) for rule in usage.rules) or ", ".join(usage.header)
    found = [
        UsageSource(name, label, value, detail)
        for label, value in (("train-ai", usage.train_ai), ("search", usage.search))
        if value != "unknown"
    ]
    for label, raw in usage.unknown_labels:
        value = _YN.get(raw)
        if value is not None:  # another value says nothing we can read
            found.append(UsageSource(name, label, value, detail))
    return found


def _from_signals(signals: ContentSignals) -> list[UsageSource]:
    detail = f"line {signals.line}"
    return [
        UsageSource(
            "robots-content-signal",
            SIGNAL_LABELS.get(label, label),
            "allowed" if allowed else "disallowed",
            f"{detail}: {label}={'yes' if allowed else 'no'}",
        )
        for label, allowed in signals.signals
    ]


def _from_tdm(tdm_file: TdmAnswer | None, page: PageDirectives | None) -> list[UsageSource]:
    # The response's own tdm-reservation (header or meta) supersedes the file (TDMRep,
    # "Processing priority").
    if page is not None and page.tdm_reservation is not None:
        value: Preference = "disallowed" if page.tdm_reservation else "allowed"
        detail = f"tdm-reservation: {int(page.tdm_reservation)}"
        if page.tdm_policy:
            detail += f"; tdm-policy: {page.tdm_policy}"
        return [UsageSource("tdmrep-page", "train-ai", value, detail)]
    if tdm_file is None or (tdm_file.status == "not-reserved" and tdm_file.entry is None):
        return []  # no file, or no entry for this path: the file says nothing here
    if tdm_file.status == "unknown":
        return [UsageSource("tdmrep-file", "train-ai", "unknown", tdm_file.reason)]
    value = "disallowed" if tdm_file.status == "reserved" else "allowed"
    detail = tdm_file.reason + (f"; tdm-policy: {tdm_file.policy}" if tdm_file.policy else "")
    return [UsageSource("tdmrep-file", "train-ai", value, detail)]


def _from_page(page: PageDirectives) -> list[UsageSource]:
    found: list[UsageSource] = []
    if page.noai:
        found.append(UsageSource("page-directives", "train-ai", "disallowed", "noai"))
    if page.noindex:
        found.append(UsageSource("page-directives", "search", "disallowed", "noindex"))
    return found
