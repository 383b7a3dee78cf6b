"""Shared Redis store tests (a real redis-server, worker processes)."""
