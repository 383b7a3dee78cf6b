"""Reliability tests: hostile servers, hostile robots.txt files and load with failures."""
