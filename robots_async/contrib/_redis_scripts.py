"""The Lua scripts of :class:`~robots_async.contrib.redis.RedisStore`: each runs on one
key (one slot in a cluster) in one round trip, atomically on the server."""

from __future__ import annotations

__all__ = ["ACQUIRE", "OBSERVE", "PACE", "PUT", "RELEASE", "RENEW"]

# Take the lease (SET NX PX), or take over a key under its name that has no expiry:
# every lease of ours has one, so that key is another program's, and left alone it
# made every worker wait a whole fetch's time on every refresh of that origin.
ACQUIRE = """
if redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then return 1 end
if redis.call("pttl", KEYS[1]) == -1 then
    redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2])
    return 1
end
return 0
"""
# Delete the lease only if it still holds our token (compare-and-delete).
RELEASE = """
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
end
return 0
"""
# Extend the lease only if it still holds our token (compare-and-expire).
RENEW = """
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("pexpire", KEYS[1], ARGV[2])
end
return 0
"""
# Replace a record in one step, on its one key (one slot in a cluster):
# ARGV[1] is the expiry in ms, then field/value pairs.
PUT = """
redis.call("del", KEYS[1])
redis.call("hset", KEYS[1], unpack(ARGV, 2))
redis.call("pexpire", KEYS[1], ARGV[1])
return 1
"""

# Pacing (core.pacing, repeated here): the observations of one unit in one hash, on
# the server's clock (TIME), so workers' clocks do not matter. One round trip a call.
# ARGV: interval, max_retry_after, first_backoff, max_backoff, jitter, margin, mode
# ("reserve": take the next visit; "pause": the pauses left and an interval after
# the last page sent late; "sent": record a page sent now, after its turn; "send": for
# a page whose turn began ARGV[9] seconds ago, the pauses left and the seconds short
# of an interval after another page, core.pacing.left_at_send), JITTER (a back-off
# grows by up to that fraction of itself, by the reader's jitter).
PACE = """
local t = redis.call("time")
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local s = redis.call("hmget", KEYS[1], "last", "retry_at", "paused_at", "failed_at", "failures",
    "sent")
local interval, max_retry_after = tonumber(ARGV[1]), tonumber(ARGV[2])
local first_backoff, max_backoff = tonumber(ARGV[3]), tonumber(ARGV[4])
local jitter, margin, spread = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[8])
local last, retry_at, paused_at = tonumber(s[1]), tonumber(s[2]), tonumber(s[3])
local failed_at, failures, sent = tonumber(s[4]), tonumber(s[5]) or 0, tonumber(s[6])
local function expire_after(keep)
    local ttl = redis.call("pttl", KEYS[1])
    -- At most 10^13 ms (~317 years): Lua passes a larger number as "1e+14" (%.14g),
    -- which PEXPIRE refuses, and the pacing of huge limits failed in Redis every time.
    local px = math.min(math.ceil(keep * 1000), 1e13)
    if ttl < px then redis.call("pexpire", KEYS[1], px) end
end
if ARGV[7] == "sent" then
    if not sent or sent < now then
        redis.call("hset", KEYS[1], "sent", string.format("%.6f", now))
        expire_after(interval + margin)
    end
    return {"0", failures, 1}
end
local finish = 0
if retry_at and paused_at then finish = math.min(retry_at, paused_at + max_retry_after) end
if failures > 0 and failed_at then
    local backoff = math.min(first_backoff * 2 ^ math.min(failures - 1, 64), max_backoff)
    finish = math.max(finish, failed_at + backoff * (1 + spread * jitter))
end
if ARGV[7] == "send" then
    local short = 0
    if sent then short = sent + interval - now end
    if last then
        local began = last
        if last > now then began = last - interval end
        if began > now - tonumber(ARGV[9]) + interval / 2 then
            -- An interval after the reserved turn too, when there is one (last).
            short = math.max(short, last + interval - now)
        end
        -- Waited out, it would go with (or after) the page of the turn reserved next.
        if last > now and last <= now + short then short = last + interval - now end
    end
    return {string.format("%.6f", math.max(0, finish - now)), failures,
        string.format("%.6f", math.max(0, short))}
end
local start = math.max(now, finish)
if ARGV[7] == "pause" then
    if sent then start = math.max(start, sent + interval) end
    return {string.format("%.6f", start - now), failures, 1}
end
if last and last > start then
    -- Another worker holds the next turn: ask again when it begins (core.pacing.turn).
    return {string.format("%.6f", last - now), failures, 0}
end
if last then start = math.max(start, last + interval) end
if sent then start = math.max(start, sent + interval) end
-- A time read as 'inf' (edited, or another program's) is answered, not written: as
-- 'last', with the key kept 10^13 ms, every worker paced the unit by itself for good.
if start == math.huge then return {"inf", failures, 1} end
redis.call("hset", KEYS[1], "last", string.format("%.6f", start))
expire_after(math.max(start + interval, finish) - now + margin)
return {string.format("%.6f", start - now), failures, 1}
"""
# ARGV: busy ("1"/"0"), retry_after seconds ("" for none), max_retry_after,
# max_backoff, margin, first_backoff, 1 + JITTER, seconds since the request was sent
# ("" if unknown). A pause is never shortened; a 429 to a request sent within the
# back-off or before (else: one arriving within it) does not double it; a success
# ends a failure run as
# core.pacing._after_success says (within the back-off: nothing; for one more
# back-off: the pause only, the run kept for a 429 of the same moment; then all).
OBSERVE = """
local t = redis.call("time")
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local keep = tonumber(ARGV[5])
local run = redis.call("hmget", KEYS[1], "failures", "failed_at")
local failures, failed_at = tonumber(run[1]), tonumber(run[2])
local backoff = 0
if failures then
    backoff = math.min(tonumber(ARGV[6]) * 2 ^ math.min(failures - 1, 64), tonumber(ARGV[4]))
end
if ARGV[1] == "0" then
    if failures then
        failed_at = failed_at or 0
        local longest = backoff * tonumber(ARGV[7])
        if now >= failed_at + longest + backoff then
            redis.call("hdel", KEYS[1], "failures", "failed_at")
        elseif now >= failed_at + backoff and now - longest < failed_at then
            redis.call("hset", KEYS[1], "failed_at", string.format("%.6f", now - longest))
        end
    end
    return 0
end
if ARGV[2] ~= "" then
    local until_ = now + math.max(0, tonumber(ARGV[2]))
    local seen = tonumber(redis.call("hget", KEYS[1], "retry_at"))
    if seen and seen >= until_ then return 0 end
    redis.call("hset", KEYS[1], "retry_at", string.format("%.6f", until_),
        "paused_at", string.format("%.6f", now))
    keep = keep + math.min(until_ - now, tonumber(ARGV[3]))
else
    -- Sent before the back-off ended (core.pacing.observed): the same overload.
    local sent = now
    if ARGV[8] ~= "" then sent = now - math.max(0, tonumber(ARGV[8])) end
    if failures and failed_at and sent < failed_at + backoff then return 0 end
    redis.call("hincrby", KEYS[1], "failures", 1)
    redis.call("hset", KEYS[1], "failed_at", string.format("%.6f", now))
    keep = keep + tonumber(ARGV[4]) * (tonumber(ARGV[7]) + 1)  -- core.pacing.keep_for
end
local ttl = redis.call("pttl", KEYS[1])
-- At most 10^13 ms (~317 years): Lua passes a larger number as "1e+14" (%.14g),
-- which PEXPIRE refuses, and the pacing of huge limits failed in Redis every time.
local px = math.min(math.ceil(keep * 1000), 1e13)
if ttl < px then redis.call("pexpire", KEYS[1], px) end
return 1
"""
