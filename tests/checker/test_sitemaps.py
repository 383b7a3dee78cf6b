"""checker.sitemap_urls against real local sites: formats, scope, robots.txt, limits."""

from __future__ import annotations

import logging
import tracemalloc
from collections import Counter
from typing import TYPE_CHECKING

import pytest

import robots_async as ra
from robots_async.core.sitemaps import SitemapLimits

from ..sitemap_site import (
    BILLION_LAUGHS,
    EXTERNAL_ENTITY,
    gz,
    gzip_bomb_gb,
    index,
    site,
    urlset,
)

if TYPE_CHECKING:
    from ..conftest import Serve

UA = "SitemapBot/1.0"
XML = "application/xml"


async def collect(walk: ra.SitemapWalk) -> list[ra.SitemapUrl]:
    return [item async for item in walk]


async def test_index_gzip_plain_text_scope_and_robots(serve: Serve) -> None:
    """Every expected URL; none disallowed or out of scope; one robots.txt request;
    each sitemap fetched once (the index also lists one twice)."""
    hits: Counter[str] = Counter()
    other_hits: Counter[str] = Counter()
    vouch_hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    robots = "User-agent: *\nDisallow: /private\nSitemap: /sitemap_index.xml\n"
    base = await serve(site(pages, hits, robots))
    other = await serve(site({}, other_hits, "User-agent: *\nAllow: /\n"))
    # This origin's robots.txt cross-submits the plain sitemap: its URLs are in scope.
    vouching = await serve(
        site({}, vouch_hits, f"User-agent: *\nDisallow:\nSitemap: {base}/plain.xml\n")
    )
    pages["/sitemap_index.xml"] = (
        index([f"{base}/maps/a.xml.gz", f"{base}/plain.xml", f"{base}/list.txt",
               f"{base}/plain.xml", "http://elsewhere.invalid/s.xml"]),
        XML,
    )  # fmt: skip
    gz_locs = [f"{base}/a/{i}" for i in range(5)] + [f"{base}/private/a"]
    pages["/maps/a.xml.gz"] = (gz(urlset(gz_locs)), "application/octet-stream")
    plain_locs = [f"{base}/p/1", f"{other}/outside", f"{vouching}/cross", f"{base}/private/p"]
    pages["/plain.xml"] = (urlset(plain_locs, "<image:image/>".replace("image:", "")), XML)
    pages["/list.txt"] = (f"{base}/t/1\n\n{base}/private/t\r\n{base}/t/2".encode(), "text/plain")

    async with ra.RobotsChecker(UA) as checker:
        walk = checker.sitemap_urls(base + "/")
        items = await collect(walk)
    locs = sorted(item.loc for item in items)
    expected = [f"{base}/a/{i}" for i in range(5)] + [f"{base}/p/1", f"{base}/t/1", f"{base}/t/2"]
    assert locs == sorted([*expected, f"{vouching}/cross"])
    assert hits["/robots.txt"] == 1
    assert {p: hits[p] for p in pages} == dict.fromkeys(pages, 1)
    stats = walk.stats
    assert stats.sitemaps_fetched == 4
    assert stats.sitemaps_failed == 0
    assert stats.dropped_robots == 3
    assert stats.dropped_scope == 2  # other/outside, and the index's off-site child
    assert stats.cross_submitted == 1
    assert stats.urls_yielded == 9
    assert other_hits["/robots.txt"] == 1
    assert vouch_hits["/robots.txt"] == 1
    by_loc = {item.loc: item for item in items}
    assert by_loc[f"{base}/a/0"].lastmod is not None
    assert by_loc[f"{base}/a/0"].sitemap == f"{base}/maps/a.xml.gz"
    assert all(item.verdict is None for item in items)


async def test_include_disallowed_carries_verdicts(serve: Serve) -> None:
    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    base = await serve(site(pages, hits, "User-agent: *\nDisallow: /cat/private\n"))
    locs = [f"{base}/cat/x", f"{base}/cat/private/y", f"{base}/top"]
    pages["/cat/s.xml"] = (urlset(locs), XML)
    async with ra.RobotsChecker(UA) as checker:
        walk = checker.sitemap_urls(base, sitemaps=["/cat/s.xml"], include_disallowed=True)
        items = await collect(walk)
    # A caller-given sitemap has path scope only: /cat/ (so /top is dropped).
    verdicts = [(i.loc, i.verdict.allowed if i.verdict else None) for i in items]
    assert verdicts == [(f"{base}/cat/x", True), (f"{base}/cat/private/y", False)]
    assert walk.stats.dropped_scope == 1
    assert walk.stats.dropped_robots == 1


async def test_feeds_are_sitemaps(serve: Serve) -> None:
    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    robots = "User-agent: *\nDisallow:\nSitemap: /rss\nSitemap: /atom\n"
    base = await serve(site(pages, hits, robots))
    rss = (
        b'<rss version="2.0"><channel><link>/</link><item><link>/r1</link>'
        b"<pubDate>Sat, 07 Sep 2002 00:00:01 GMT</pubDate></item></channel></rss>"
    )
    atom = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry>'
        b'<link href="/a1"/><updated>2003-12-13T18:30:02Z</updated></entry></feed>'
    )
    pages["/rss"] = (rss, XML)
    pages["/atom"] = (atom, XML)
    async with ra.RobotsChecker(UA) as checker:
        items = await collect(checker.sitemap_urls(base))
    assert [(i.loc, i.lastmod is not None) for i in items] == [
        (f"{base}/r1", True),
        (f"{base}/a1", True),
    ]


async def test_hostile_sitemaps_stop_at_their_limits(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    """A 1 GB gzip bomb, billion laughs, an external entity, an index listing itself
    and one with 10,000 children: each stopped within its limit, with a warning, in
    bounded memory, and the good sitemap (listed last) still read."""
    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    names = ["/bomb.gz", "/laughs.xml", "/xxe.xml", "/self.xml", "/big.xml", "/good.xml"]
    robots = "User-agent: *\nDisallow:\n" + "".join(f"Sitemap: {n}\n" for n in names)
    base = await serve(site(pages, hits, robots))
    pages["/bomb.gz"] = (gzip_bomb_gb(), "application/octet-stream")
    pages["/laughs.xml"] = (BILLION_LAUGHS, XML)
    pages["/xxe.xml"] = (EXTERNAL_ENTITY, XML)
    pages["/self.xml"] = (index([f"{base}/self.xml"]), XML)
    pages["/big.xml"] = (index([f"{base}/child/{i}.xml" for i in range(10_000)]), XML)
    pages["/child/*"] = (urlset([f"{base}/from-child"]), XML)
    pages["/good.xml"] = (urlset([f"{base}/good/{i}" for i in range(3)]), XML)
    limits = SitemapLimits(max_uncompressed_bytes=8 * 1024 * 1024, max_sitemaps=20)

    async with ra.RobotsChecker(UA) as checker:
        walk = checker.sitemap_urls(base, limits=limits)
        tracemalloc.start()
        with caplog.at_level(logging.WARNING, logger="robots_async"):
            items = await collect(walk)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"tracemalloc peak {peak / 2**20:.1f} MiB")
    locs = [item.loc for item in items]
    assert [f"{base}/good/{i}" for i in range(3)] == [u for u in locs if "/good/" in u]
    stats = walk.stats
    assert stats.sitemaps_fetched == 20
    assert hits["/self.xml"] == 1
    assert sum(hits[p] for p in hits if p.startswith("/child/")) == 14
    text = "\n".join(stats.warnings)
    assert "bytes uncompressed" in text  # the bomb, cut at 8 MiB of its 1 GiB
    assert "entity declaration 'lol' refused" in text
    assert "entity declaration 'xxe' refused" in text
    assert "lists " + f"{base}/self.xml again" in text
    assert "20 sitemaps read" in text
    assert stats.limits_hit == 2
    assert "sitemap:" in caplog.text
    assert peak < 24 * 2**20


async def test_sitemap_on_another_host_is_guarded_like_a_redirect(serve: Serve) -> None:
    """robots.txt naming a sitemap on another host: its first request goes through the
    address guard as a redirect would (here to a loopback address: refused); the same
    URL given by the caller is the caller's own request."""
    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    base = await serve(site(pages, hits, ""))
    elsewhere = f"http://[::ffff:127.0.0.1]:{base.rsplit(':', 1)[1]}/s.xml"
    other_base = await serve(site(pages, hits, f"User-agent: *\nDisallow:\nSitemap: {elsewhere}\n"))
    pages["/s.xml"] = (urlset([f"{base}/x"]), XML)
    async with ra.RobotsChecker(UA) as checker:
        named = checker.sitemap_urls(other_base)
        assert [item async for item in named] == []
        given = checker.sitemap_urls(base, sitemaps=[elsewhere])
        assert [item.loc async for item in given] == []  # /x is not under the given host
    assert named.stats.sitemaps_failed == 1
    assert "blocked-redirect" in named.stats.warnings[0]
    assert given.stats.sitemaps_fetched == 1
    assert given.stats.sitemaps_failed == 0
    assert hits["/s.xml"] == 1


async def test_children_past_max_sitemaps_are_not_held(serve: Serve) -> None:
    """Children an index lists past what ``max_sitemaps`` lets the walk read are
    counted, not queued: two indexes of 20,000 children each under max_sitemaps=3
    queued all 40,000 (about 14 MiB traced; 500 such indexes of 50,000 would hold
    25 million), now at most 3, in memory like one index's own entries."""
    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    base = await serve(site(pages, hits, "User-agent: *\nDisallow:\nSitemap: /root.xml\n"))
    pages["/root.xml"] = (index([f"{base}/idx/{i}.xml" for i in range(2)]), XML)
    for i in range(2):
        pages[f"/idx/{i}.xml"] = (index([f"{base}/leaf/{i}/{j}" for j in range(20_000)]), XML)
    async with ra.RobotsChecker(UA) as checker:
        walk = checker.sitemap_urls(base, limits=SitemapLimits(max_sitemaps=3))
        tracemalloc.start()
        assert await collect(walk) == []
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"tracemalloc peak {peak / 2**20:.1f} MiB")
    assert walk.stats.sitemaps_fetched == 3
    assert walk.stats.limits_hit == 1
    assert walk.stats.warnings == (f"limit: 3 sitemaps read for {base}; 40000 left unread",)
    assert peak < 8 * 2**20


async def test_an_index_gets_one_warning_per_kind(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    """An index listing one sitemap 500 times, and one past max_depth listing 1,000
    children: one warning each (not one per child: 1,498 log lines and
    ``limits_hit == 1000`` before), the depth limit counted once."""
    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    base = await serve(site(pages, hits, "User-agent: *\nDisallow:\nSitemap: /root.xml\n"))
    pages["/root.xml"] = (index([f"{base}/deep.xml"] * 500), XML)
    pages["/deep.xml"] = (index([f"{base}/leaf/{j}.xml" for j in range(1_000)]), XML)
    async with ra.RobotsChecker(UA) as checker:
        walk = checker.sitemap_urls(base, limits=SitemapLimits(max_depth=1))
        with caplog.at_level(logging.WARNING, logger="robots_async"):
            assert await collect(walk) == []
    assert walk.stats.warnings == (
        f"{base}/root.xml lists {base}/deep.xml again (499 repeats in all): read once",
        f"limit: index depth 1 at {base}/deep.xml; 1000 sitemaps left unread",
    )
    assert walk.stats.limits_hit == 1
    assert len([r for r in caplog.records if r.name == "robots_async"]) == 2
    assert hits["/deep.xml"] == 1
    assert not any(path.startswith("/leaf/") for path in hits)


async def test_foreign_origin_limit_is_warned_once(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    """Past ``max_foreign_origins``, URLs of further origins are dropped with one
    warning for the walk (one per URL before: 38 here, ``limits_hit == 38``)."""
    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    base = await serve(site(pages, hits, "User-agent: *\nDisallow:\n"))
    # Port 9 on these loopback addresses refuses at once: no server, no wait.
    foreign = [f"http://127.0.0.{2 + i % 20}:9/{i}" for i in range(41)]
    pages["/s.xml"] = (urlset(foreign), XML)
    async with ra.RobotsChecker(UA) as checker:
        walk = checker.sitemap_urls(
            base, sitemaps=["/s.xml"], limits=SitemapLimits(max_foreign_origins=1)
        )
        with caplog.at_level(logging.WARNING, logger="robots_async"):
            assert await collect(walk) == []
    assert walk.stats.dropped_scope == 41
    assert walk.stats.limits_hit == 1
    assert len(walk.stats.warnings) == 1
    assert walk.stats.warnings[0].startswith("limit: 1 other origins' robots.txt read")
    assert len([r for r in caplog.records if r.getMessage().startswith("sitemap:")]) == 1


async def test_unreadable_sitemap_urls_fail_that_sitemap_only(serve: Serve) -> None:
    """Sitemap URLs no client can fetch, named by robots.txt or an index (``http://[::1``,
    a port past 65535, ftp:), each fail alone; the walk goes on. ValueError or
    InvalidURLError ended the walk before. A caller's own bad URL is refused at once
    (InvalidURLError)."""
    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    robots = "User-agent: *\nDisallow:\nSitemap: http://[::1/x\nSitemap: ftp://h/s.xml\n"
    base = await serve(site(pages, hits, robots + "Sitemap: /idx.xml\n"))
    pages["/idx.xml"] = (index(["http://[::1/y", "http://127.0.0.1:99999/z", "/good.xml"]), XML)
    pages["/good.xml"] = (urlset([f"{base}/ok", "//[::1/q", "http://127.0.0.1:99999/q"]), XML)
    async with ra.RobotsChecker(UA) as checker:
        walk = checker.sitemap_urls(base)
        assert [item.loc for item in await collect(walk)] == [f"{base}/ok"]
        with pytest.raises(ra.InvalidURLError):
            await collect(checker.sitemap_urls(base, sitemaps=["http://[::1/x"]))
    assert walk.stats.sitemaps_fetched == 4  # ftp:, idx, :99999, good
    assert walk.stats.sitemaps_failed == 2
    assert walk.stats.dropped_scope == 2  # [::1/y (no host), :99999/q
    assert hits["/good.xml"] == 1


async def test_one_str_for_sitemaps_is_refused(serve: Serve) -> None:
    """``sitemaps="/s.xml"`` (a str is an Iterable[str] to a type checker) read each
    character as a sitemap URL: 5 requests, for /, /s, /x, /m and /l."""
    hits: Counter[str] = Counter()
    base = await serve(site({}, hits, ""))
    async with ra.RobotsChecker(UA) as checker:
        with pytest.raises(ra.ConfigurationError, match="sitemaps"):
            checker.sitemap_urls(base, sitemaps="/s.xml")
    assert sum(hits.values()) == 0
