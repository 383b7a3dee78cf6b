"""Which groups of a robots.txt apply to a crawler: product tokens, Google's agent
rules (an exact name first, then the token reduction), and the per-token memo.

A base class of :class:`RobotsTxt` (a single chain of bases, as a compiled build
needs): its attributes are RobotsTxt's slots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .agent import crawler_name, product_token
from .rules import agent_token

if TYPE_CHECKING:
    from .matcher import Bucket
    from .policy import MatchPolicy
    from .rules import RawGroup

__all__ = ["AgentSelection"]

#: Buckets kept per file by token, at most.
_MAX_CACHED_TOKENS = 64
_UNSEEN: Any = object()
#: Files with at most this many groups answer every new token by a scan of their
#: agent lines, never building the agent index (~7.5 us and ~1.7 KB kept a file,
#: paid by every file asked by a second crawler name; issue 32).
_SCAN_GROUPS = 16
#: Larger files too are scanned for a later token some agent line contains until
#: this many names are cached: a scan of a 50-line file costs less than the index
#: (7.5 us and ~220 bytes a file asked by five names, which two scans at most need).
_NAMES_BEFORE_INDEX = 8
#: RobotsTxt._first before any question: a token no str equals. Tested by its token
#: (``first[0] is _NOBODY_TOKEN``), never by the tuple's identity: a compiled build stores a
#: fixed-size tuple unboxed and makes a new one on each read.
_NOBODY_TOKEN: Final = object()
_NOBODY: tuple[object, None] = (_NOBODY_TOKEN, None)

#: User-Agent -> product token, as _token_of() derived it (a dict read is 14 ns, an
#: lru_cache hit 34: allowed() reads this first).
_TOKENS: dict[str, str] = {}
_MAX_TOKENS = 1024


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


def agent_text(groups: list[RawGroup]) -> bytes:
    """The agent lines of ``groups``, lower-cased in one string (see _unnamed).

    A non-ASCII line is there twice: ASCII-lowered, as its token is read, and
    decoded and Unicode-lowered, as its full name is compared (lower() can make
    ASCII of other letters: the Kelvin sign is "k").
    """
    text = b"\n".join([agent for group in groups for agent in group.agents]).lower()
    if text.isascii():
        return text
    return b"\n".join([text, *_unicode_lowered(text)])


def _unicode_lowered(text: bytes) -> list[bytes]:
    """The lines of ``text`` with a non-ASCII byte, decoded, Unicode-lowered, encoded.

    (bytes.lower() changed only ASCII letters, which Unicode lower() lowers alike, so
    the lines of ``text`` serve.) A test per line: 19 us for www.koreanair.com's 477
    agent lines, against 28 us for a regex search of high bytes and 32 us to decode
    and lower the whole text.
    """
    return [
        line.decode("utf-8", "replace").lower().encode()
        for line in text.split(b"\n")
        if not line.isascii()
    ]


def _unnamed(canonical: str, text: bytes) -> bool:
    """True if no agent line in ``text`` (agent_text()) contains the lower-cased token:
    it then selects the ``*`` groups, as a scan finds, in one search instead of a
    pass over every group. An ASCII token found in neither reading of a line can be
    neither its token (an ASCII run of the line) nor its name (compared in the
    line's Unicode lower case)."""
    return canonical != "" and canonical.isascii() and canonical.encode() not in text


class AgentSelection:
    """Token to group indices for a RobotsTxt (its first base class)."""

    # Slots of RobotsTxt that this part reads and writes, declared here: a single
    # chain of slotted classes keeps an instance as small as one slotted class.
    __slots__ = ("_agent_text", "_buckets", "_first", "_groups", "_index", "_policy")

    _groups: list[RawGroup]
    _policy: MatchPolicy
    _first: tuple[object, Bucket | None]
    _buckets: dict[str, Bucket | None] | None
    _agent_text: bytes | None
    _index: _AgentIndex | None

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
        index (~330 bytes per agent line); an index is built for a later token that
        some agent line contains (see _unnamed) only in a file of more than
        _SCAN_GROUPS groups asked by _NAMES_BEFORE_INDEX names already.
        """
        if (
            index
            and len(self._groups) > _SCAN_GROUPS
            and (
                self._index is not None
                or (self._buckets is not None and len(self._buckets) >= _NAMES_BEFORE_INDEX)
            )
        ):
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
