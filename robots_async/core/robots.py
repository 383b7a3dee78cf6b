"""RobotsTxt: the immutable result of parsing, and the questions a crawler asks it."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import TYPE_CHECKING, Any, Literal, cast

from .compiled import compiled_bucket
from .matcher import (
    EMPTY,
    Bucket,
    decide,
)
from .policy import GOOGLE, rfc_target
from .prefixes import UNKNOWN
from .queries import ROBOTS_PATH, RobotsQueries
from .scores import ALLOW_BIT, NON_EMPTY
from .selection import (
    _MAX_CACHED_TOKENS,
    _NOBODY,
    _NOBODY_TOKEN,
    _TOKENS,
    _UNSEEN,
    _AgentIndex,
    _token_of,
    _unnamed,
    agent_text,
)
from .url import encode_non_ascii, request_target

if TYPE_CHECKING:
    from .content_signals import SignalLines
    from .packed_warnings import PackedWarnings
    from .policy import MatchPolicy
    from .results import CleanParam, Group, ParseWarning, WarningRecord
    from .rules import RawGroup

__all__ = ["RobotsTxt"]

# An absolute http(s) URL with a path: its request target in one regex (the rest go
# through request_target(), which gives the same for these).
_HTTP_PATH = re.compile("https?://[^/?;#]*(/[^#]*)").match
#: Raises TypeError for anything but a str (allowed() catches it: request_target()).
_starts_with = str.startswith

#: RobotsTxt._seen before any URL: a prefix of the form _HTTP_PATH reads (a URL
#: starting with it gets what the regex would give), which no real URL has.
_NO_ORIGIN_SEEN = "http://\x00/"
#: The longest origin text RobotsTxt._seen keeps (a host name has 253 characters).
_MAX_ORIGIN_SEEN = 320


class RobotsTxt(RobotsQueries):
    """A parsed robots.txt. Immutable; safe to share between tasks and threads.

    Build one with :func:`robots_async.parse`, :class:`robots_async.RobotsParser`,
    :meth:`allow_all` or :meth:`disallow_all`. Every question takes either
    ``user_agent`` (a full User-Agent header; its product token is derived) or
    ``robots_token`` (used verbatim, exactly as Google's matcher takes its agent).
    ``user_agent`` may be passed positionally, as Protego's users write it:
    ``robots.allowed(url, "MyBot")``, ``robots.crawl_delay("MyBot")``.
    """

    __slots__ = (
        "_clean_params",
        "_google_like",
        "_host",
        "_seen",
        "_sitemaps",
        "_truncated",
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
        file_signals: SignalLines | None = None,
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
        # Content-Signal lines before any group: the default of a crawler whose groups
        # (if any) have none of their own.
        self._file_signals = file_signals
        # The default policy's target handling, decided once instead of per question.
        self._google_like = (
            policy.encode_raw_url
            and policy.robots_txt_allowed
            and not policy.rfc3986
            and not policy.first_match
        )
        # Compiled rules per product token as asked (tokens that select the same
        # groups share one bucket).
        # The first token asked and its bucket (most files are asked about by one
        # crawler: no dict then, ~150 bytes a file less after its questions).
        # One tuple, stored once: no thread (free-threaded builds included) can see
        # one question's token with another's bucket.
        self._first: tuple[object, Bucket | None] = _NOBODY
        self._seen = _NO_ORIGIN_SEEN
        self._buckets: dict[str, Bucket | None] | None = None
        #: The agent lines lower-cased (selection.agent_text), from the second token on.
        self._agent_text: bytes | None = None
        #: Agent index (see _select): files of many groups asked by many names.
        self._index: _AgentIndex | None = None
        self._public_groups: tuple[Group, ...] | None = None
        self._usage: dict[tuple[int, ...], Any] | None = None

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

    def allowed(  # noqa: PLR0912 (the hot path: each branch saves a call)
        self, url: object, user_agent: str | None = None, *, robots_token: str | None = None
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
            # Other names asked before: their cached rules read here, not through
            # _bucket() (a call, a lower() and dict writes: 5 names cost 1.2x one).
            buckets = self._buckets
            # Read into an untyped name: a compiled build checks what is stored in
            # ``bucket`` (a Bucket or None) and would refuse the sentinel.
            found = _UNSEEN if buckets is None else buckets.get(token, _UNSEEN)
            bucket = self._bucket(token) if found is _UNSEEN else found
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

    def _allowed_by_policy(self, url: object, bucket: Bucket | None) -> bool:
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

    def __repr__(self) -> str:
        if self._synthetic is not None:
            return f"<RobotsTxt {self._synthetic}>"
        rules = sum(len(g.lines) for g in self._groups)
        return (
            f"<RobotsTxt groups={len(self._groups)} rules={rules} "
            f"sitemaps={len(self._sitemaps)} policy={self._policy.name!r}>"
        )

    def _target(self, url: object) -> str:
        target = request_target(url)
        policy = self._policy
        if policy.encode_raw_url and not target.isascii():
            target = encode_non_ascii(target)
        return rfc_target(target) if policy.rfc3986 else target

    def _bucket(self, token: str) -> Bucket | None:
        """The compiled rules for a token (None: no group applies), cached per token."""
        first = self._first
        if token == first[0]:
            return first[1]
        if first[0] is _NOBODY_TOKEN:
            # Tokens match case-insensitively: "Googlebot" and "googlebot" select alike.
            indices = self._select(token.lower())
            compiled = self._compile(indices) if indices else None
            self._first = (token, compiled)
            return compiled
        buckets = self._buckets
        if buckets is None:
            buckets = self._buckets = {}
        else:
            found = buckets.get(token, _UNSEEN)  # (untyped: see allowed())
            if found is not _UNSEEN:
                return found  # type: ignore[no-any-return]
            # Tokens come from the caller: bound the cache (a file has few groups anyway).
            if len(buckets) >= _MAX_CACHED_TOKENS:
                buckets.clear()
        text = self._agent_text
        if text is None:
            text = self._agent_text = agent_text(self._groups)
            if _unnamed(cast("str", first[0]).lower(), text):
                buckets["*"] = first[1]  # (a name no line contains selects what "*" does)
        canonical = token.lower()
        if _unnamed(canonical, text):
            found = buckets.get("*", _UNSEEN)  # (untyped: see allowed())
            if found is _UNSEEN:
                found = buckets["*"] = self._bucket_of(self._select("*", index=False))
        else:
            found = self._bucket_of(self._select(canonical))
        # Kept only as asked (no lower-cased copy, no entry by group indices: a file
        # asked by five names keeps 184 bytes of dict, not 632 and four strings).
        buckets[token] = found
        return found  # type: ignore[no-any-return]

    def _bucket_of(self, indices: tuple[int, ...]) -> Bucket | None:
        """The bucket of the groups at ``indices``: one a token asked before has (tokens
        that select the same groups share it), or a new one."""
        if not indices:
            return None
        known = self._first[1]
        if known is not None and known.indices == indices:
            return known
        # A copy in one C call: another thread may add a token meanwhile.
        for known in tuple(cast("dict[str, Bucket | None]", self._buckets).values()):
            if known is not None and known.indices == indices:
                return known
        return self._compile(indices)

    def _compile(self, indices: tuple[int, ...]) -> Bucket:
        return compiled_bucket(self._groups, indices, self._policy)
