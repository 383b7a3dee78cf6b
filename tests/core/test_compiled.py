"""Files with the same rules share one compiled bucket; anything that changes a verdict,
a line or a group keeps them apart."""

from __future__ import annotations

import threading

import robots_async as ra
from robots_async.core import compiled as _compiled

WORDPRESS = b"User-agent: *\nDisallow: /wp-admin/\nAllow: /wp-admin/admin-ajax.php\n"


def _bucket(robots: ra.RobotsTxt) -> object:
    robots.allowed("https://a.test/", robots_token="bot")
    return robots._first[1]


def test_same_rules_share_one_bucket_and_answer_alike() -> None:
    first, second = ra.parse(WORDPRESS), ra.parse(b"# other site\n" + WORDPRESS)
    third = ra.parse(WORDPRESS + b"Sitemap: https://c.test/s.xml\n")
    assert _bucket(first) is _bucket(third)
    # One comment line moves every rule: lines differ, so the bucket does too.
    assert _bucket(second) is not _bucket(first)
    url = "https://x.test/wp-admin/options.php"
    assert first.explain(url, robots_token="bot").line == 2
    assert second.explain(url, robots_token="bot").line == 3
    assert not first.allowed(url, robots_token="bot")
    assert third.allowed("https://x.test/wp-admin/admin-ajax.php", robots_token="bot")


def test_policy_group_and_values_keep_buckets_apart() -> None:
    base = _bucket(ra.parse(WORDPRESS))
    assert _bucket(ra.parse(WORDPRESS, policy="rfc9309")) is not base
    other_value = WORDPRESS.replace(b"/wp-admin/\n", b"/wp-admin2/\n")
    assert _bucket(ra.parse(other_value)) is not base
    # The same rules in the second group: another group index for explain().
    moved = ra.parse(b"User-agent: a\nDisallow: /x\n" + WORDPRESS.replace(b"\n", b"\n", 1))
    verdict = moved.explain("https://x.test/wp-admin/", robots_token="bot")
    assert (verdict.allowed, verdict.agents) == (False, ("*",))


def test_large_rule_sets_are_not_kept() -> None:
    paths = [f"/page{i}/" for i in range(600)]
    body = ("User-agent: *\n" + "".join(f"Disallow: {p}\n" for p in paths)).encode()
    assert sum(map(len, paths)) > _compiled.MAX_SHARED_BYTES
    first, second = ra.parse(body), ra.parse(body)  # both alive: ids cannot repeat
    assert _bucket(first) is not _bucket(second)


def test_the_shared_table_is_bounded() -> None:
    for i in range(_compiled.MAX_SHARED + 50):
        _bucket(ra.parse(f"User-agent: *\nDisallow: /bound{i}\n".encode()))
    assert len(_compiled._shared) <= _compiled.MAX_SHARED


def test_threads_compiling_at_once_all_get_right_answers() -> None:
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(300):
                robots = ra.parse(f"User-agent: *\nDisallow: /t{(n * 7 + i) % 40}\n".encode())
                path = f"/t{(n * 7 + i) % 40}/x"
                assert not robots.allowed("https://x.test" + path, robots_token="bot")
                assert robots.allowed("https://x.test/other", robots_token="bot")
        except BaseException as exc:  # noqa: BLE001 (reported by the main thread)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
