"""Matching policies: how lenient the parser is and how a verdict is reached.

``google`` (default) reproduces Google's reference matcher plus three documented
improvements (raw non-ASCII URLs are %-encoded; /robots.txt is always allowed; a
group naming the crawler exactly is its group); ``google-reference`` is the
reference bit for bit; ``rfc9309`` is the RFC without Google's leniency, with
RFC 9309 §2.2.2 normalisation of both sides and RFC 3986 dot-segment removal;
``first-match`` is the 1997 draft's reading (first matching rule in file order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal, get_args

from .errors import ConfigurationError, ConfigurationTypeError

__all__ = [
    "FIRST_MATCH",
    "GOOGLE",
    "GOOGLE_REFERENCE",
    "RFC9309",
    "MatchPolicy",
    "POLICY_NAMES",
    "PolicyName",
    "get_policy",
    "normalise_patterns",
]

#: The names of the matching presets (a ``policy`` argument takes one or a MatchPolicy).
PolicyName = Literal["google", "google-reference", "rfc9309", "first-match"]
POLICY_NAMES: tuple[PolicyName, ...] = get_args(PolicyName)


@dataclass(frozen=True, slots=True)
class MatchPolicy:
    """The knobs that distinguish one matching semantics from another."""

    name: str
    #: Google: accept ``useragent``, ``disalow``, ``site-map`` ... as their keys.
    accept_typos: bool
    #: Google: keys match by prefix (``Disallowed:`` is a Disallow).
    prefix_keys: bool
    #: Google: ``user-agent FooBot`` (space instead of colon) is accepted.
    whitespace_separator: bool
    #: Google: ``Allow: /d/index.html`` also allows exactly ``/d/``.
    index_html: bool
    #: RFC 9309 §2.2.2: decode unreserved %XX and upper-case hex on both sides; RFC
    #: 3986 §5.2.4 dot-segment removal on the target.
    rfc3986: bool
    #: 1997 draft: the first matching rule in file order decides.
    first_match: bool
    #: Improvement over the reference: %-encode raw non-ASCII in the URL before matching.
    encode_raw_url: bool = True
    #: RFC 9309 §2.2.2: /robots.txt is implicitly allowed (the reference disallows it).
    robots_txt_allowed: bool = True
    #: Improvement over the reference: a group naming the crawler exactly (up to the
    #: first space or "/") is its group; only without one does Google's cut at the
    #: first character outside [A-Za-z_-] decide, and an empty token never selects a
    #: named group (the reference lets "360Spider" and "008" select each other's).
    exact_agents: bool = True


GOOGLE = MatchPolicy(
    name="google",
    accept_typos=True,
    prefix_keys=True,
    whitespace_separator=True,
    index_html=True,
    rfc3986=False,
    first_match=False,
)
#: Google's reference matcher bit for bit, without the two improvements of GOOGLE.
GOOGLE_REFERENCE = replace(
    GOOGLE,
    name="google-reference",
    encode_raw_url=False,
    robots_txt_allowed=False,
    exact_agents=False,
)
RFC9309 = MatchPolicy(
    name="rfc9309",
    accept_typos=False,
    prefix_keys=False,
    whitespace_separator=False,
    index_html=False,
    rfc3986=True,
    first_match=False,
)
#: RFC 9309's parsing and normalisation, with the 1997 draft's first-match decision.
FIRST_MATCH = replace(RFC9309, name="first-match", first_match=True)
_PRESETS = {p.name: p for p in (GOOGLE, GOOGLE_REFERENCE, RFC9309, FIRST_MATCH)}


def get_policy(policy: object, *, setting: str = "policy") -> MatchPolicy:
    """Return the preset named ``policy`` (or ``policy`` itself if already one).

    Typed ``object`` so that adapters can pass a raw setting: this is its check.
    ``setting`` is the name the error gives it (e.g. ``ROBOTSASYNC_POLICY``).

    :raises ConfigurationError: for an unknown name (a ValueError);
        :raises ConfigurationTypeError: for another type (a TypeError).
    """
    if isinstance(policy, MatchPolicy):
        return policy
    if isinstance(policy, str) and policy in _PRESETS:
        return _PRESETS[policy]  # before the message below: building it costs 0.5 us
    accepted = "one of " + ", ".join(repr(name) for name in POLICY_NAMES) + " or a MatchPolicy"
    if not isinstance(policy, str):
        raise ConfigurationTypeError(setting, policy, accepted)
    raise ConfigurationError(setting, policy, accepted)


# Only escapes with a lower-case hex digit change: most files write upper case, and
# a callback per escape made he.wikipedia.org's first question 0.8 ms (748 of them).
_PCT_LOWER = re.compile(rb"%(?:[0-9A-F][a-f]|[a-f][0-9A-Fa-f])")
_HIGH_RUN = re.compile("[\x80-\xff]+")
_PCT_TRIPLET = re.compile("%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def google_pattern(value: bytes) -> str:
    """Normalise an Allow/Disallow value the way Google's reference does.

    Every byte >= 0x80 becomes ``%XY`` and existing ``%xy`` escapes get upper-case hex;
    nothing is decoded and ASCII is never encoded (google_semantics.md item 17).
    """
    if b"%" in value:
        value = _PCT_LOWER.sub(_upper, value)
    text = value.decode("latin-1")
    if text.isascii():
        return text
    return _HIGH_RUN.sub(_escape_run, text)


def _upper(match: re.Match[bytes]) -> bytes:
    return match.group().upper()


def _escape_run(match: re.Match[str]) -> str:
    """A run of bytes >= 0x80 (latin-1 decoded) as ``%XY`` escapes: one call a run
    (a UTF-8 word), not one a byte."""
    return "%" + match.group().encode("latin-1").hex("%").upper()


def rfc3986_normalise(text: str) -> str:
    """Decode %-escaped unreserved octets and upper-case the rest (RFC 3986 §6.2.2).

    RFC 9309 §2.2.2 (Figure 4): ``/foo/bar/%62%61%7A`` and ``/foo/bar/baz`` are equal.
    """
    if "%" not in text:
        return text
    return _PCT_TRIPLET.sub(_decode_unreserved, text)


def _decode_unreserved(match: re.Match[str]) -> str:
    octet = int(match.group()[1:], 16)
    return chr(octet) if octet in _UNRESERVED else match.group().upper()


def rfc_pattern(value: bytes) -> str:
    """Normalise a pattern for the RFC policies; a ``$`` that is not final is literal.

    RFC 9309 §2.2.3: ``%2A`` and ``%24`` in a pattern stand for literal ``*`` and ``$``;
    targets get their literal ``*``/``$`` encoded the same way (see :func:`rfc_target`).
    """
    text = rfc3986_normalise(google_pattern(value))
    anchored = text.endswith("$")
    body = text[:-1] if anchored else text
    if "$" in body:
        body = body.replace("$", "%24")
    return body + "$" if anchored else body


def rfc_target(target: str) -> str:
    """Normalise a request target for the RFC policies (see :func:`rfc_pattern`).

    Unreserved escapes are decoded first, so ``/%2E%2E/x`` loses its dot segment too.
    """
    target = remove_dot_segments(rfc3986_normalise(target))
    if "*" in target or "$" in target:
        target = target.replace("*", "%2A").replace("$", "%24")
    return target


def remove_dot_segments(target: str) -> str:
    """RFC 3986 §5.2.4 on the path of ``target`` (the query is left alone).

    ``/a/b/c/./../../g`` becomes ``/a/g``: what a client that normalises the URL puts
    on the wire, so a rule for ``/private`` also governs ``/x/../private``.
    """
    path, mark, query = target.partition("?")
    if "." not in path:
        return target
    output: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "..":
            if len(output) > 1:
                output.pop()
            if last:
                output.append("")
        elif segment == ".":
            if last:
                output.append("")
        else:
            output.append(segment)
    normalised = "/".join(output)
    if not normalised.startswith("/"):
        normalised = "/" + normalised
    return normalised + mark + query


def normalise_patterns(policy: MatchPolicy, blob: bytes) -> list[str]:
    """Normalise newline-joined Allow/Disallow values in one pass (a group's rules)."""
    if not policy.rfc3986:
        return google_pattern(blob).split("\n")
    return [rfc_pattern(value) for value in blob.split(b"\n")]
