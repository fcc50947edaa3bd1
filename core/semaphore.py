"""Counting semaphores in Redis: at most N holders of a name across every process and machine.

Each name is a sorted set of holders scored by the time their slot expires, on Redis's own
clock (`TIME`, the same for every machine). `ACQUIRE` (one Lua script, atomic) drops the
expired holders and adds this one if fewer than the limit remain; a release removes the
holder. A holder that dies without releasing (a killed process, a lost machine) frees its
slot when its lease ends, so the lease must outlast the work it covers.

Used by the evaluations' per-provider limit (`evaluations.semaphore`, which waits for a
slot) and the pair server's (`serving.cluster_limit`, which refuses at once).
"""

from __future__ import annotations

from .redis_client import key_prefix

# KEYS[1]: the set; ARGV: limit, lease in seconds, the holder's token. 1 if acquired.
ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 60)
  return 1
end
return 0
"""


def semaphore_key(kind: str, name: str) -> str:
    """The set of `name`'s holders; `kind` keeps the users of this module apart."""
    return f"{key_prefix()}:{kind}:{name}"
