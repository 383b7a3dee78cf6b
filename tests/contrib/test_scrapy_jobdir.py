"""A crawl with JOBDIR keeps its robots.txt records there: a resumed crawl fetches none."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .conftest import run_crawl

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Site

ROBOTS = b"User-agent: *\nDisallow: /private\n"


def test_resumed_crawl_fetches_no_robots_txt_again(site: Site, tmp_path: Path) -> None:
    """Two crawls with one JOBDIR: robots.txt is fetched by the first only, and the
    second still refuses /private/ from the stored record."""
    hosts = [site.host() for _ in range(3)]
    for host in hosts:
        host.serve("/robots.txt", body=ROBOTS)
    starts = [f"{h.base}/{p}" for h in hosts for p in ("page", "private/x")]
    jobdir = tmp_path / "job"
    first = run_crawl(tmp_path, starts[:3], settings={"JOBDIR": str(jobdir)})
    assert sum(host.count("/robots.txt") for host in hosts) == 2  # starts[:3]: 2 hosts
    assert (jobdir / "robots_async.sqlite").is_file()
    second = run_crawl(tmp_path, starts, settings={"JOBDIR": str(jobdir)})
    assert sum(host.count("/robots.txt") for host in hosts) == 3  # only the new host
    assert second.stat("robotsasync/cache/store_hits") == 2
    assert second.stat("robotstxt/forbidden") == 3
    assert not any("/private/" in url for url in first.scraped | second.scraped)


def test_store_setting_names_a_file_or_turns_it_off(site: Site, tmp_path: Path) -> None:
    """ROBOTSASYNC_STORE names another file; '' keeps nothing even with JOBDIR."""
    host = site.host()
    host.serve("/robots.txt", body=ROBOTS)
    store = tmp_path / "elsewhere.sqlite"
    for _ in range(2):
        run_crawl(tmp_path, [f"{host.base}/page"], settings={"ROBOTSASYNC_STORE": str(store)})
    assert host.count("/robots.txt") == 1
    assert store.is_file()
    jobdir = tmp_path / "job"
    for _ in range(2):
        run_crawl(
            tmp_path,
            [f"{host.base}/page"],
            settings={"JOBDIR": str(jobdir), "ROBOTSASYNC_STORE": ""},
        )
    assert host.count("/robots.txt") == 3
    assert not (jobdir / "robots_async.sqlite").exists()
