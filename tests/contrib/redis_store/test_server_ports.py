"""A redis-server fixture whose picked port another process takes first starts on
another port (pytest-xdist workers pick and bind ports at the same time)."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import pytest

from .conftest import RedisServer, redis_binary

if TYPE_CHECKING:
    from pathlib import Path


def _listen(port: int) -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def test_a_picked_port_taken_before_the_server_binds_it_is_picked_again(tmp_path: Path) -> None:
    """The port picked is taken before start(): the server starts on another one and
    answers there (it raised "did not start" before)."""
    server = RedisServer(redis_binary(), tmp_path / "redis.log")
    taken = server.port
    with _listen(taken):
        server.start()
        try:
            assert server.port != taken
            assert server.ping()
        finally:
            server.stop()


def test_a_given_port_taken_is_an_error(tmp_path: Path) -> None:
    """A port the caller chose (a cluster node's, a restart's) is not changed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.listen()
        server = RedisServer(redis_binary(), tmp_path / "redis.log", port=port)
        with pytest.raises(RuntimeError, match="Address already in use"):
            server.start()
        assert server.port == port
