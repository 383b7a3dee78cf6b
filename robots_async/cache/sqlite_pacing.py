"""SQLiteStore's pacing table: the observations of each unit (core.pacing.PaceState).

Made on first use, so a file of an earlier version gains it in place (versions
without pacing never read it). Every reservation and observation is one
``BEGIN IMMEDIATE`` transaction: the write lock is taken before the read, so two
processes sharing the file never reserve one slot. Times are this machine's clock
(``time.time()``), shared by the processes that share the file.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from ..core.errors import InvalidRecordError
from ..core.pacing import PaceState, keep_for, left_at_send, next_visit, observed, sent_late, turn
from .pace_table import Reservation

if TYPE_CHECKING:
    import sqlite3

    from ..core.pacing import PaceRule

__all__ = ["PacingTable"]

#: Expired rows are deleted once every this many reservations.
_PURGE_EVERY = 1000

_CREATE_PACING = """
CREATE TABLE IF NOT EXISTS pacing (
    unit TEXT PRIMARY KEY,
    last REAL,
    retry_at REAL,
    paused_at REAL,
    failed_at REAL,
    failures INTEGER NOT NULL,
    expires_at REAL NOT NULL
)
"""
_PACE_GET = (
    "SELECT last, retry_at, paused_at, failed_at, failures FROM pacing"
    " WHERE unit = ? AND expires_at > ?"
)
_PACE_PUT = "INSERT OR REPLACE INTO pacing VALUES (?, ?, ?, ?, ?, ?, ?)"
# The last page of each unit sent after its turn (core.pacing.PaceState.sent), in a
# table of its own: a column added to ``pacing`` would break the positional INSERT
# of an earlier version's processes sharing the file.
_CREATE_SENT = """
CREATE TABLE IF NOT EXISTS pace_sent (
    unit TEXT PRIMARY KEY,
    at REAL NOT NULL,
    expires_at REAL NOT NULL
)
"""
_SENT_GET = "SELECT at FROM pace_sent WHERE unit = ? AND expires_at > ?"
_SENT_PUT = "INSERT OR REPLACE INTO pace_sent VALUES (?, ?, ?)"


class PacingTable:
    """Reserve, pause_left and observe on a connection (run on the store's thread)."""

    def __init__(self) -> None:
        self._reservations = 0

    def reserve(
        self, conn: sqlite3.Connection, unit: str, rule: PaceRule, jitter: float
    ) -> Reservation:
        """Reserve ``unit``'s next visit under ``rule`` (see core.pacing.turn)."""
        with _PacingTransaction(conn):
            now = time.time()
            state = _pace_state(conn, unit, now)
            start, reserved = turn(state, rule, now, jitter)
            if not reserved:
                return Reservation(start - now, state.failures, reserved=False)
            _pace_put(conn, unit, replace(state, last=start), rule, now)
            self._reservations += 1
            if self._reservations % _PURGE_EVERY == 0:
                conn.execute("DELETE FROM pacing WHERE expires_at < ?", (now,))
                conn.execute("DELETE FROM pace_sent WHERE expires_at < ?", (now,))
        return Reservation(start - now, state.failures)

    def left_at_send(
        self, conn: sqlite3.Connection, unit: str, rule: PaceRule, held: float, jitter: float
    ) -> tuple[float, float]:
        """For a page of ``unit`` whose turn began ``held`` seconds ago: the pauses
        left, and the seconds short of an interval after another page."""
        _ensure_pacing(conn)
        now = time.time()
        return left_at_send(_pace_state(conn, unit, now), rule, now, held, jitter)

    def sent_late(self, conn: sqlite3.Connection, unit: str, rule: PaceRule) -> None:
        """Record a page of ``unit`` sent now, after its turn (kept an interval, plus
        the margin every observation has)."""
        with _PacingTransaction(conn):
            now = time.time()
            state = _pace_state(conn, unit, now)
            if sent_late(state, now) is not state:
                expires_at = now + keep_for(PaceState(sent=now), rule, now)
                conn.execute(_SENT_PUT, (unit, now, expires_at))

    def pause_left(
        self, conn: sqlite3.Connection, unit: str, rule: PaceRule, jitter: float
    ) -> float:
        """Seconds until the pauses ``unit`` asked for end (no visit reserved)."""
        _ensure_pacing(conn)
        now = time.time()
        state = _pace_state(conn, unit, now)
        return max(0.0, next_visit(replace(state, last=None), rule, now, jitter) - now)

    def observe(
        self,
        conn: sqlite3.Connection,
        unit: str,
        rule: PaceRule,
        *,
        busy: bool,
        retry_after: float | None,
        elapsed: float | None,
    ) -> None:
        """Record a page response of ``unit``, ``elapsed`` seconds after its request
        was sent (None: not known), by core.pacing.observed."""
        with _PacingTransaction(conn):
            now = time.time()
            state = _pace_state(conn, unit, now)
            after = observed(
                state, now, busy=busy, retry_after=retry_after, rule=rule, elapsed=elapsed
            )
            if after is not state:
                _pace_put(conn, unit, after, rule, now)


class _PacingTransaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on error) on the pacing table."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            _ensure_pacing(self._conn)
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is None:
            self._conn.execute("COMMIT")
        elif self._conn.in_transaction:
            self._conn.execute("ROLLBACK")


def _ensure_pacing(conn: sqlite3.Connection) -> None:
    # Both statements are no-ops (no write) once the table exists: a few microseconds.
    conn.execute(_CREATE_PACING)
    conn.execute("CREATE INDEX IF NOT EXISTS pacing_expiry ON pacing (expires_at)")
    conn.execute(_CREATE_SENT)


def _pace_state(conn: sqlite3.Connection, unit: str, now: float) -> PaceState:
    sent = _sent_at(conn, unit, now)
    row = conn.execute(_PACE_GET, (unit, now)).fetchone()
    if row is None:
        return PaceState(sent=sent)
    # A row another program (or a damaged file) wrote is a store that failed, as a
    # corrupt record is: text raised ValueError/TypeError out of wait(), and an
    # infinite time made it sleep forever (the pacer paces by itself instead).
    for name, value in zip(_COLUMNS, row, strict=True):
        if not _finite(value) and (value is not None or name == "failures"):
            raise InvalidRecordError(name, f"pacing of {unit!r}: {value!r}"[:300])
    last, retry_at, paused_at, failed_at, failures = row
    return PaceState(
        _time(last), _time(retry_at), _time(paused_at), _time(failed_at), int(failures), sent
    )


def _sent_at(conn: sqlite3.Connection, unit: str, now: float) -> float | None:
    row = conn.execute(_SENT_GET, (unit, now)).fetchone()
    if row is None:
        return None
    if not _finite(row[0]):
        raise InvalidRecordError("sent", f"pacing of {unit!r}: {row[0]!r}"[:300])
    return float(row[0])


_COLUMNS = ("last", "retry_at", "paused_at", "failed_at", "failures")


def _finite(value: object) -> bool:
    """True for a finite number (SQLite hands back an INTEGER or a REAL)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _time(value: float | None) -> float | None:
    return None if value is None else float(value)


def _observations(state: PaceState) -> tuple[float | None, float | None, float | None, int]:
    """Everything but ``last``."""
    return state.retry_at, state.paused_at, state.failed_at, state.failures


def _pace_put(
    conn: sqlite3.Connection, unit: str, state: PaceState, rule: PaceRule, now: float
) -> None:
    expires_at = now + keep_for(state, rule, now)
    conn.execute(_PACE_PUT, (unit, state.last, *_observations(state), expires_at))
