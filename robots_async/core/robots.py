"""RobotsTxt: the immutable result of parsing, and the questions a crawler asks it."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import TYPE_CHECKING, Any, Literal, cast

from .agent import crawler_name, product_token
from .compiled import compiled_bucket
from .matcher import (
    EMPTY,
    Bucket,
    CompiledRule,
    compile_rule,
    decide,
    rule_matches,
)
from .packed_warnings import PACK_FROM, PackedWarnings
from .policy import GOOGLE, normalise_patterns, rfc_target
from .prefixes import UNKNOWN
from .rules import (
    Group,
    RawGroup,
    Reason,
    Rule,
    Verdict,
    WarningRecord,
    agent_token,
    format_warning,
)
from .scores import ALLOW_BIT, NON_EMPTY
from .url import encode_non_ascii, request_target
from .usage import UsagePreferences, UsageRule, combine_usage

if TYPE_CHECKING:
    from yarl import URL

    from .policy import MatchPolicy
    from .rules import CleanParam, ParseWarning, RequestRate, VisitTime

__all__ = ["RobotsTxt"]

#: RFC 9309 §2.2.2: the robots.txt URI itself is implicitly allowed.
ROBOTS_PATH = "/robots.txt"
_MAX_CACHED_TOKENS = 64
_UNSEEN: Any = object()
#: RobotsTxt._first before any question: a token no str equals.
_NOBODY: tuple[object, None] = (object(), None)
#: RobotsTxt._seen before any URL: a prefix of the form _HTTP_PATH reads (a URL
#: starting with it gets what the regex would give), which no real URL has.
_NO_ORIGIN_SEEN = "http://\x00/"
#: The longest origin text RobotsTxt._seen keeps (a host name has 253 characters).
_MAX_ORIGIN_SEEN = 320

#: User-Agent -> product token, as _token_of() derived it (a dict read is 14 ns, an
#: lru_cache hit 34: allowed() reads this first).
_TOKENS: dict[str, str] = {}
_MAX_TOKENS = 1024
# An absolute http(s) URL with a path: its request target in one regex (the rest go
# through request_target(), which gives the same for these).
_HTTP_PATH = re.compile("https?://[^/?;#]*(/[^#]*)").match
#: Raises TypeError for anything but a str (allowed() catches it: request_target()).
_starts_with = str.startswith


def _token_of(user_agent: str) -> str:
    """The product token of ``user_agent``, remembered for the next question (a
    crawler sends a few User-Agents; past _MAX_TOKENS distinct ones, start again)."""
    known = _TOKENS.get(user_agent)
    if known is not None:  # "": allowed()'s ``get() or`` reads it as a miss
        return known
    token = product_token(user_agent)
    if len(_TOKENS) >= _MAX_TOKENS:
        _TOKENS.clear()
    _TOKENS[user_agent] = token
    return token


class RobotsTxt:
    """A parsed robots.txt. Immutable; safe to share between tasks and threads.

    Build one with :func:`robots_async.parse`, :class:`robots_async.RobotsParser`,
    :meth:`allow_all` or :meth:`disallow_all`. Every question takes either
    ``user_agent`` (a full User-Agent header; its product token is derived) or
    ``robots_token`` (used verbatim, exactly as Google's matcher takes its agent).
    """

    __slots__ = (
        "_buckets",
        "_clean_params",
        "_first",
        "_google_like",
        "_groups",
        "_host",
        "_index",
        "_policy",
        "_public_groups",
        "_seen",
        "_sitemaps",
        "_synthetic",
        "_truncated",
        "_usage",
        "_warnings",
    )

    def __init__(
        self,
        groups: list[RawGroup],
        *,
        policy: MatchPolicy = GOOGLE,
        sitemaps: tuple[str, ...] = (),
        host: str | None = None,
        clean_params: tuple[CleanParam, ...] = (),
        warnings: list[WarningRecord] | None = None,
        truncated: bool = False,
        synthetic: Literal["allow-all", "disallow-all"] | None = None,
    ) -> None:
        self._groups = groups
        self._policy = policy
        self._sitemaps = sitemaps
        self._host = host
        self._clean_params = clean_params
        # Packed (see _pack_warnings) only by a cache that keeps the file.
        self._warnings: list[WarningRecord] | PackedWarnings | tuple[ParseWarning, ...] = (
            warnings or []
        )
        self._truncated = truncated
        self._synthetic = synthetic
        # The default policy's target handling, decided once instead of per question.
        self._google_like = (
            policy.encode_raw_url
            and policy.robots_txt_allowed
            and not policy.rfc3986
            and not policy.first_match
        )
        # Compiled rules per product token as asked, and per set of groups (tokens
        # that select the same groups share one bucket).
        # The first token asked and its bucket (most files are asked about by one
        # crawler: no dict then, ~150 bytes a file less after its questions).
        # One tuple, stored once: no thread (free-threaded builds included) can see
        # one question's token with another's bucket.
        self._first: tuple[object, Bucket | None] = _NOBODY
        self._seen = _NO_ORIGIN_SEEN
        self._buckets: dict[str | tuple[int, ...], Bucket | None] | None = None
        #: Agent index (see _select), built once a second token is asked about.
        self._index: _AgentIndex | None = None
        self._public_groups: tuple[Group, ...] | None = None
        self._usage: dict[tuple[int, ...], list[tuple[CompiledRule, UsagePreferences]]] | None = (
            None
        )

    @classmethod
    def allow_all(cls) -> RobotsTxt:
        """Everything allowed: what RFC 9309 §2.3.1.3 prescribes when the file is absent."""
        return cls([], synthetic="allow-all")

    @classmethod
    def disallow_all(cls) -> RobotsTxt:
        """Everything disallowed (but /robots.txt): RFC 9309 §2.3.1.4, unreachable."""
        return cls([], synthetic="disallow-all")

    @property
    def policy(self) -> MatchPolicy:
        """The matching policy this file was parsed with."""
        return self._policy

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """Sitemap URLs in file order, duplicates removed (they belong to no group)."""
        return self._sitemaps

    @property
    def host(self) -> str | None:
        """The first ``Host:`` value (Yandex's preferred mirror), if any."""
        return self._host

    @property
    def clean_params(self) -> tuple[CleanParam, ...]:
        """Yandex ``Clean-param`` records in file order."""
        return self._clean_params

    @property
    def truncated(self) -> bool:
        """True if the body was longer than ``max_bytes`` and the rest ignored."""
        return self._truncated

    @property
    def synthetic(self) -> str | None:
        """``"allow-all"``/``"disallow-all"`` for files that were not parsed, else None."""
        return self._synthetic

    @property
    def warnings(self) -> tuple[ParseWarning, ...]:
        """What a linter would report, in line order (at most 1,000 are kept).

        A file with many (16 or more) builds the tuple on each call, so that a cache
        can keep them packed: keep the tuple if you read it more than once.
        """
        warnings = self._warnings
        if isinstance(warnings, tuple):
            return warnings
        # In line order, the "too-many-warnings" marker last (_rules).
        formatted = tuple(format_warning(*w) for w in warnings)
        if len(warnings) < PACK_FROM:  # (never packed: no thread can race a cache)
            self._warnings = formatted
        return formatted

    def _pack_warnings(self) -> None:
        """Keep many warnings in flat buffers (RobotsCache does, for what it keeps).

        An HTML page served as robots.txt has a thousand: ~205 KB as records, ~40 KB
        packed. Packing costs ~0.1 ms, 4% of the corpus's parse time if parse()
        did it for every file (paired), so only a holder that keeps files calls it.
        """
        warnings = self._warnings
        if isinstance(warnings, list) and len(warnings) >= PACK_FROM:
            self._warnings = PackedWarnings(warnings)

    @property
    def groups(self) -> tuple[Group, ...]:
        """The groups in file order, rules normalised as the policy matches them."""
        if self._public_groups is None:
            self._public_groups = tuple(self._public_group(i) for i in range(len(self._groups)))
        return self._public_groups

    def allowed(  # noqa: PLR0912 (the hot path: each branch saves a call)
        self, url: str | URL, *, user_agent: str | None = None, robots_token: str | None = None
    ) -> bool:
        """Return True if the agent may fetch ``url`` (absolute URL or path).

        ``url`` is matched with the policy's own semantics, as written; a checker
        first turns it into the URL its HTTP client sends (see RobotsChecker).
        """
        if robots_token is None and user_agent is not None:
            token = _TOKENS.get(user_agent) or _token_of(user_agent)
        elif type(robots_token) is str:
            token = robots_token
        else:
            token = self._token(user_agent, robots_token)
        first = self._first
        if token == first[0]:
            bucket = first[1]
        else:
            bucket = self._bucket(token)
        if bucket is None or not self._google_like:
            return self._allowed_by_policy(url, bucket)
        # request_target() inlined for the usual absolute http(s) URL with a path (a
        # yarl URL raises TypeError here: no type test on the hot path). str's own
        # startswith: a UserString or a str subclass's override must not pick the slice.
        seen = self._seen
        try:
            if _starts_with(url, seen):  # type: ignore[arg-type]
                # The origin of the URL asked before: the target is the rest, its
                # fragment dropped (a slice: 190 -> 90 ns a question).
                target = url[len(seen) - 1 :]  # type: ignore[index]
                if "#" in target:
                    target = target[: target.index("#")]
            else:
                target = self._http_target(url)  # type: ignore[arg-type]
        except TypeError:  # not a str (str.startswith refuses it): the general path
            target = request_target(url)
        if not target.isascii():
            target = encode_non_ascii(target)
        heads = bucket.heads  # (google-like buckets never keep rules in file order)
        if heads is not None and not target.startswith(heads):
            return True  # (nothing could disallow it: measured 1/3 of the corpus URLs)
        # Bucket.longest() inlined (a call is 4% of a question): the longest literal
        # prefix of the target, the answer in buckets of literals only (most).
        prefixes = bucket.prefixes
        i = bisect_right(prefixes, target) - 1
        while i >= 0 and not target.startswith(prefixes[i]):
            parents = bucket.parents
            up = parents[i] if parents else UNKNOWN
            i = bucket.parent(i) if up == UNKNOWN else up
        # The robots.txt URL is allowed whatever the rules (tested only when it matters).
        if bucket.exact is None and bucket.wild is None:
            # An Allow (negative line) or the empty pattern (google_semantics.md 36).
            return i < 0 or bucket.signed[i] < 0 or not prefixes[i] or target == ROBOTS_PATH
        best = bucket.best_from(target, i)
        return best < NON_EMPTY or best & ALLOW_BIT != 0 or target == ROBOTS_PATH

    def _http_target(self, url: str) -> str:
        """request_target() for a str URL; an absolute http(s) URL with a path also
        becomes the origin seen (scheme, host and the path's "/")."""
        common = _HTTP_PATH(url)
        if common is None:
            return request_target(url)
        # The origin's text holds no "/", "?", ";" or "#": a URL starting with it
        # and that "/" is one _HTTP_PATH matches, with the path the rest. (A hostile
        # URL's long host is not kept: a cached file would hold it.)
        end = common.start(1) + 1
        if end <= _MAX_ORIGIN_SEEN:
            self._seen = url[:end]
        return common[1]

    def _allowed_by_policy(self, url: str | URL, bucket: Bucket | None) -> bool:
        """allowed() without a bucket, or for policies other than Google's."""
        if bucket is None and self._synthetic != "disallow-all" and type(url) is str:
            return True  # (no rule for the agent: the target is not needed)
        target = self._target(url)
        if target == ROBOTS_PATH and self._policy.robots_txt_allowed:
            return True
        if bucket is None:
            return self._synthetic != "disallow-all"
        if bucket.rules is None:
            return bucket.allows(target)
        rule = decide(bucket, target, self._policy, self._groups)
        return rule is None or rule.allow or rule.kind == EMPTY

    def explain(
        self, url: str | URL, *, user_agent: str | None = None, robots_token: str | None = None
    ) -> Verdict:
        """Return the :class:`Verdict` for ``url``: the deciding rule, line and group."""
        target = self._target(url)
        token = self._token(user_agent, robots_token)
        bucket = self._bucket(token)
        if target == ROBOTS_PATH and self._policy.robots_txt_allowed:
            return Verdict(True, "robots-txt", token=token)
        if bucket is None:
            reason: Reason = "no-group" if self._synthetic is None else self._synthetic
            return Verdict(reason != "disallow-all", reason, token=token)
        rule = decide(bucket, target, self._policy, self._groups)
        if rule is None:
            return Verdict(True, "no-match", agents=self._agents(bucket.indices), token=token)
        agents = self._groups[rule.group].agent_names
        if rule.kind == EMPTY:
            reason = "empty-rule"
        else:
            reason = "allow" if rule.allow else "disallow"
        return Verdict(reason != "disallow", reason, rule.rule, rule.line, agents, token)

    def usage(
        self, url: str | URL, *, user_agent: str | None = None, robots_token: str | None = None
    ) -> UsagePreferences | None:
        """AI usage preferences for ``url`` (the ``Content-Usage`` rules), or None.

        None when the agent may not fetch ``url`` at all: a URL that may not be
        crawled has no usage preference (draft-ietf-aipref-attach §4). Otherwise the
        longest matching rule's preference (encoded path length, as for Allow/
        Disallow); rules of equal length combine, the most restrictive winning.
        Without a matching rule every category is "unknown".
        """
        token = self._token(user_agent, robots_token)
        if not self.allowed(url, robots_token=token):
            return None
        target = self._target(url)
        best = -1
        chosen: list[UsagePreferences] = []
        for compiled, reading in self._usage_rules(token):
            priority = compiled.priority
            if priority >= best and rule_matches(compiled, target):
                if priority > best:
                    best, chosen = priority, []
                chosen.append(reading)
        return combine_usage(*chosen) if chosen else UsagePreferences()

    def crawl_delay(
        self, *, user_agent: str | None = None, robots_token: str | None = None
    ) -> float | None:
        """Crawl-delay in seconds for the agent (the largest of its merged groups)."""
        groups = self._groups_for(user_agent, robots_token)
        delays = [g.crawl_delay for g in groups if g.crawl_delay is not None]
        return max(delays) if delays else None

    def request_rate(
        self, *, user_agent: str | None = None, robots_token: str | None = None
    ) -> RequestRate | None:
        """Request-rate for the agent (the slowest of its merged groups)."""
        rates = [g.request_rate for g in self._groups_for(user_agent, robots_token)]
        present = [r for r in rates if r is not None]
        return max(present, key=lambda r: r.delay) if present else None

    def visit_time(
        self, *, user_agent: str | None = None, robots_token: str | None = None
    ) -> VisitTime | None:
        """Visit-time window for the agent (the first one given), if any."""
        for group in self._groups_for(user_agent, robots_token):
            if group.visit_time is not None:
                return group.visit_time
        return None

    def groups_for(
        self, *, user_agent: str | None = None, robots_token: str | None = None
    ) -> tuple[Group, ...]:
        """The groups whose rules apply to the agent (merged, RFC 9309 §2.2.1)."""
        indices = self._indices(self._token(user_agent, robots_token))
        return tuple(self.groups[i] for i in indices)

    def __repr__(self) -> str:
        if self._synthetic is not None:
            return f"<RobotsTxt {self._synthetic}>"
        rules = sum(len(g.lines) for g in self._groups)
        return (
            f"<RobotsTxt groups={len(self._groups)} rules={rules} "
            f"sitemaps={len(self._sitemaps)} policy={self._policy.name!r}>"
        )

    def _target(self, url: str | URL) -> str:
        target = request_target(url)
        policy = self._policy
        if policy.encode_raw_url and not target.isascii():
            target = encode_non_ascii(target)
        return rfc_target(target) if policy.rfc3986 else target

    @staticmethod
    def _token(user_agent: str | None, robots_token: str | None) -> str:
        if robots_token is not None:
            if not isinstance(robots_token, str):
                raise TypeError(f"robots_token must be str, not {type(robots_token).__name__}")
            return robots_token
        if user_agent is None:
            raise TypeError("pass user_agent= (a User-Agent header) or robots_token=")
        return _token_of(user_agent)

    def _indices(self, token: str) -> tuple[int, ...]:
        """Group indices for a token: its specific groups, else the ``*`` groups."""
        first = self._first
        if token == first[0]:
            return () if first[1] is None else first[1].indices
        bucket = _UNSEEN if self._buckets is None else self._buckets.get(token, _UNSEEN)
        if bucket is not _UNSEEN:
            return () if bucket is None else bucket.indices
        # Not asked before (crawl_delay() first, or the cache sizing the entry):
        # answered without building the agent index as a side effect.
        return self._select(token.lower(), index=self._index is not None)

    def _select(self, canonical: str, *, index: bool = True) -> tuple[int, ...]:
        """The groups of a lower-cased token (see MatchPolicy.exact_agents).

        The first token is found by one pass over the agents and kept with its
        compiled rules (_bucket), so a file asked about by one crawler retains no
        index (~330 bytes per agent line); an index is built for the second token.
        """
        if index and (self._index is not None or self._first is not _NOBODY):
            return self._from_index(canonical)
        exact_agents = self._policy.exact_agents
        # Names are compared only for a real name ("*" asks for the global group).
        by_name = exact_agents and canonical not in ("", "*")
        named: list[int] = []
        exact: list[int] = []
        global_groups: list[int] = []
        # An ASCII agent line whose lower case lacks the token can neither be its
        # group nor name it: skipped with three C calls instead of a regex and a
        # decode. Non-ASCII lines go the long way: Unicode lower() can make ASCII
        # ("\u212a", the Kelvin sign, is "k").
        quick = canonical.encode() if canonical and canonical.isascii() else None
        for i, group in enumerate(self._groups):
            for agent in group.agents:
                if (
                    quick is not None
                    and agent[:1] != b"*"
                    and agent.isascii()
                    and quick not in agent.lower()
                ):
                    continue
                token = agent_token(agent)
                if token is None:
                    if not global_groups or global_groups[-1] != i:
                        global_groups.append(i)
                elif token == canonical and (not named or named[-1] != i):
                    named.append(i)
                if by_name and (not exact or exact[-1] != i):
                    text = agent.decode("utf-8", "replace")
                    if canonical in text.lower() and crawler_name(text).lower() == canonical:
                        exact.append(i)
        return self._chosen(canonical, named, exact, global_groups)

    def _chosen(
        self, canonical: str, named: list[int], exact: list[int], global_groups: list[int]
    ) -> tuple[int, ...]:
        """_select's answer from the groups found by token, by name and for ``*``."""
        if not self._policy.exact_agents:
            indices = named  # the reference: "" selects "" groups too
        elif canonical:
            indices = exact or named
        else:
            indices = []  # an empty token never selects a named group
        if not indices:
            indices = global_groups
        # The 1997 draft: only the first matching record applies.
        return tuple(indices[:1] if self._policy.first_match else indices)

    def _from_index(self, canonical: str) -> tuple[int, ...]:
        """:meth:`_select` through the agent index: many tokens, many groups."""
        if self._index is None:
            self._index = _AgentIndex(self._groups, self._policy.exact_agents)
        index = self._index
        if not self._policy.exact_agents:
            indices = index.tokens.get(canonical)
        elif canonical:
            indices = index.names.get(canonical) or index.tokens.get(canonical)
        else:
            indices = None
        if indices is None:
            indices = index.global_groups
        return indices[:1] if self._policy.first_match else indices

    def _agents(self, indices: tuple[int, ...]) -> tuple[str, ...]:
        """The agent names of the groups at ``indices`` as written, duplicates removed."""
        return tuple(dict.fromkeys(a for i in indices for a in self._groups[i].agent_names))

    def _groups_for(self, user_agent: str | None, robots_token: str | None) -> list[RawGroup]:
        return [self._groups[i] for i in self._indices(self._token(user_agent, robots_token))]

    def _bucket(self, token: str) -> Bucket | None:
        """The compiled rules for a token (None: no group applies), cached per token."""
        first = self._first
        if token == first[0]:
            return first[1]
        # Tokens match case-insensitively: "Googlebot" and "googlebot" share a bucket.
        canonical = token.lower()
        if first is _NOBODY:
            indices = self._select(canonical)
            compiled = self._compile(indices) if indices else None
            self._first = (token, compiled)
            return compiled
        buckets = self._buckets
        if buckets is None:
            token0, bucket0 = cast("tuple[str, Bucket | None]", first)
            buckets = self._buckets = {token0: bucket0, token0.lower(): bucket0}
            if bucket0 is not None:
                buckets[bucket0.indices] = bucket0
        bucket: Bucket | None = buckets.get(canonical, _UNSEEN)
        if bucket is _UNSEEN:
            indices = self._select(canonical)
            bucket = buckets.get(indices, _UNSEEN)
            if bucket is _UNSEEN:
                bucket = self._compile(indices) if indices else None
        # Tokens come from the caller: bound the cache (a file has few groups anyway).
        if len(buckets) >= _MAX_CACHED_TOKENS:
            buckets.clear()
        if bucket is not None:
            buckets[bucket.indices] = bucket
        buckets[token] = buckets[canonical] = bucket
        return bucket

    def _usage_rules(self, token: str) -> list[tuple[CompiledRule, UsagePreferences]]:
        """The agent's Content-Usage rules, compiled once per set of groups."""
        indices = self._indices(token)
        if self._usage is None:
            self._usage = {}
        rules = self._usage.get(indices)
        if rules is None:
            rules = []
            for index in indices:
                for rule in self._usage_of(index):
                    compiled = compile_rule(rule[0].path, True, rule[0].line, index)
                    rules.append((compiled, rule[1]))
            self._usage[indices] = rules
        return rules

    def _usage_of(self, index: int) -> list[tuple[UsageRule, UsagePreferences]]:
        """A group's Content-Usage rules, path patterns normalised by the policy."""
        raw = self._groups[index].usage or []
        found = []
        for path, text, reading, line in raw:
            pattern = normalise_patterns(self._policy, path)[0] if path else ""
            rule = UsageRule(pattern, text, line)
            found.append(
                (
                    rule,
                    UsagePreferences(
                        reading.train_ai, reading.search, reading.unknown_labels, (rule,)
                    ),
                )
            )
        return found

    def _compile(self, indices: tuple[int, ...]) -> Bucket:
        return compiled_bucket(self._groups, indices, self._policy)

    def _public_group(self, index: int) -> Group:
        raw = self._groups[index]
        patterns = normalise_patterns(self._policy, raw.blob) if raw.lines else []
        rules = tuple(
            Rule(signed < 0, pattern, abs(signed))
            for pattern, signed in zip(patterns, raw.lines, strict=True)
        )
        usage = tuple(rule for rule, _ in self._usage_of(index))
        return Group(
            raw.agent_names,
            rules,
            raw.line,
            raw.crawl_delay,
            raw.request_rate,
            raw.visit_time,
            usage,
        )


class _AgentIndex:
    """Token -> indices of the groups naming it, full names likewise, the ``*`` groups."""

    __slots__ = ("global_groups", "names", "tokens")

    def __init__(self, groups: list[RawGroup], exact_agents: bool) -> None:
        tokens: dict[str, dict[int, None]] = {}
        names: dict[str, dict[int, None]] = {}
        global_groups: dict[int, None] = {}
        for i, group in enumerate(groups):
            for token in group.tokens:
                if token is None:
                    global_groups[i] = None
                else:
                    tokens.setdefault(token, {})[i] = None
            if exact_agents:
                for name in group.names:
                    names.setdefault(name, {})[i] = None
        self.global_groups = tuple(global_groups)
        self.tokens = {token: tuple(found) for token, found in tokens.items()}
        self.names = {name: tuple(found) for name, found in names.items()}
