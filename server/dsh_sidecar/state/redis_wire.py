"""What crosses the wire to the fleet store: the Lua scripts every multi-key write runs on the
server (each repairs what it touches first, so a hostile or stale value never makes a write
fail) and the bounded read, and the readers of what comes back (untrusted: another tenant, an
old layout or an operator may have written it).
"""

from __future__ import annotations

import math
import re

# Every write script repairs what it touches before it writes, so a hostile or stale value
# (another tenant, an old layout, an operator) never makes the write fail: a key of another
# type, or bigger than any we write, is deleted; a hash field that is not a number we could
# have written (``nan``, ``inf``, ``1e400``, 20 digits, text) is deleted, i.e. counts from 0.
# Keys are deleted with UNLINK, which frees a big value off the server's main thread: a DEL
# (or a SET over it) of a planted hash of a million fields blocked the server 0.6-1.0 s, and
# with it every sidecar of the fleet.
# Nothing is written before the op marker is taken, and nothing after it can raise.
_REPAIR = """
local function fix(key, want, most)
  local t = redis.call('TYPE', key)['ok']
  if t == 'none' then return end
  if t ~= want then redis.call('UNLINK', key) return end
  local n = 0
  if want == 'hash' then n = redis.call('HLEN', key)
  elseif want == 'zset' then n = redis.call('ZCARD', key)
  else n = redis.call('STRLEN', key) end
  if n > most then redis.call('UNLINK', key) end
end
local function is_int(v)
  return v ~= false and #v <= 15 and string.match(v, '^%-?%d+$') ~= nil
end
local function is_num(v)
  if v == false or #v > 40 or not string.match(v, '^%-?%d*%.?%d*[eE]?[%-+]?%d*$') then return false end
  local x = tonumber(v)
  return x ~= nil and x == x and x < 1e300 and x > -1e300
end
local function int_field(h, f)
  local v = redis.call('HGET', h, f)
  if v and not is_int(v) then redis.call('HDEL', h, f) end
end
local function num_field(h, f)
  local v = redis.call('HGET', h, f)
  if v and not is_num(v) then redis.call('HDEL', h, f) end
end
local function int_key(k)
  fix(k, 'string', 15)
  local v = redis.call('GET', k)
  if v and not is_int(v) then redis.call('UNLINK', k) end
end
"""

# KEYS[1] cooldown key. ARGV: failure class, milliseconds. Keeps a longer running cooldown; a
# value of another type is unlinked first (SET would replace it, freeing it on the main thread).
COOLDOWN = """
if redis.call('TYPE', KEYS[1])['ok'] ~= 'string' then redis.call('UNLINK', KEYS[1]) end
local left = redis.call('PTTL', KEYS[1])
if left < tonumber(ARGV[2]) then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1
"""

# KEYS[1] window zset. ARGV: limit, window µs, member. Returns 0 (slot taken) or µs to wait.
# Entries stamped later than the window's end (a skewed or hostile writer) are dropped too:
# they would hold the provider's slots for the whole fleet forever.
SLOT = (
    _REPAIR
    + """
fix(KEYS[1], 'zset', 100000)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '(' .. string.format('%d', now + window), '+inf')
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, math.min(window, tonumber(oldest[2]) + window - now))
"""
)

# KEYS[1] entry, KEYS[2] index. ARGV: value, ttl s, max entries, max value bytes, entry prefix.
# First writer wins. An entry of another type or over the bound is replaced; the index only
# ever deletes keys of the cache's own family (a planted member naming another key is dropped).
CACHE_PUT = (
    _REPAIR
    + """
fix(KEYS[1], 'string', tonumber(ARGV[4]))
fix(KEYS[2], 'zset', tonumber(ARGV[3]) * 2 + 16)
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZADD', KEYS[2], now, KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[2]))
redis.call('ZREMRANGEBYSCORE', KEYS[2], '(' .. (now + 86400), '+inf')
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if over > 0 then
  local old = redis.call('ZPOPMIN', KEYS[2], over)
  local prefix = ARGV[5]
  for i = 1, #old, 2 do
    if string.sub(old[i], 1, #prefix) == prefix and old[i] ~= KEYS[2] then redis.call('UNLINK', old[i]) end
  end
end
redis.call('EXPIRE', KEYS[2], ARGV[2])
return 1
"""
)

# KEYS[1] op marker, then (counts hash, discounted hash) per row.
# ARGV: op ttl, kind, arm, value, discount, width, buckets, learned ttl, max fields, arms...
BANDIT = (
    _REPAIR
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local kind, arm, x = ARGV[2], ARGV[3], tonumber(ARGV[4])
local g, width, buckets, ttl = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8]
local most = tonumber(ARGV[9])
for i = 2, #KEYS, 2 do
  local n, d = KEYS[i], KEYS[i + 1]
  fix(n, 'hash', most)
  fix(d, 'hash', most)
  int_field(n, arm .. ':updates')
  num_field(n, arm .. ':reward')
  int_field(d, 't')
end
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
for i = 2, #KEYS, 2 do
  local n, d = KEYS[i], KEYS[i + 1]
  local t, ai, bi
  if kind == 'update' then
    redis.call('HINCRBY', n, arm .. ':updates', 1)
    t = redis.call('HINCRBY', d, 't', 1)
    if t % width == 0 then
      local old = string.format('%d', math.floor(t / width) - buckets)
      for j = 10, #ARGV do redis.call('HDEL', d, old .. ':' .. ARGV[j] .. ':a', old .. ':' .. ARGV[j] .. ':b') end
    end
    ai, bi = x, 1 - x
  else
    t = tonumber(redis.call('HGET', d, 't') or '0')
    ai, bi = x, -x
  end
  redis.call('HINCRBYFLOAT', n, arm .. ':reward', x)
  local k = math.floor(t / width)
  local w = 1
  if g < 1 then w = g ^ ((k + 1) * width - t) end
  local prefix = string.format('%d', k) .. ':' .. arm .. ':'
  num_field(d, prefix .. 'a')
  num_field(d, prefix .. 'b')
  redis.call('HINCRBYFLOAT', d, prefix .. 'a', ai * w)
  redis.call('HINCRBYFLOAT', d, prefix .. 'b', bi * w)
  redis.call('EXPIRE', n, ttl)
  redis.call('EXPIRE', d, ttl)
end
return 1
"""
)

# KEYS: op marker, rows hash, used zset, dismissals zset, version.
# ARGV: op ttl, learned ttl, max rows, max dismissals, now, row count, max row fields,
#       then 5 per row (member, followed, ignored, seed, lastUsed), then 2 per dismissal (member, expiresAt).
# Last uses stamped more than a day ahead and expiries past the longest dismissal are dropped
# (a planted +inf would otherwise outlive every real entry).
KNOWLEDGE = (
    _REPAIR
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local rows, used, dis, ver = KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local ttl, now = tonumber(ARGV[2]), tonumber(ARGV[5])
fix(rows, 'hash', tonumber(ARGV[7]))
fix(used, 'zset', tonumber(ARGV[3]) * 2)
fix(dis, 'zset', tonumber(ARGV[4]) * 2)
int_key(ver)
local i = 8
for r = 1, tonumber(ARGV[6]) do
  local m = ARGV[i]
  int_field(rows, 'f:' .. m)
  int_field(rows, 'i:' .. m)
  num_field(rows, 's:' .. m)
  i = i + 5
end
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
redis.call('ZREMRANGEBYSCORE', used, '(' .. (now + 86400), '+inf')
redis.call('ZREMRANGEBYSCORE', dis, '(' .. (now + ttl), '+inf')
i = 8
for r = 1, tonumber(ARGV[6]) do
  local m, f, ig, s, u = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), ARGV[i + 4]
  if s > 0 and not redis.call('ZSCORE', used, m) then redis.call('HSET', rows, 's:' .. m, ARGV[i + 3]) end
  if f ~= 0 then redis.call('HINCRBY', rows, 'f:' .. m, f) end
  if ig ~= 0 then redis.call('HINCRBY', rows, 'i:' .. m, ig) end
  redis.call('ZADD', used, 'GT', u, m)
  i = i + 5
end
local over = redis.call('ZCARD', used) - tonumber(ARGV[3])
if over > 0 then
  local old = redis.call('ZPOPMIN', used, over)
  for j = 1, #old, 2 do redis.call('HDEL', rows, 'f:' .. old[j], 'i:' .. old[j], 's:' .. old[j]) end
end
while i < #ARGV do
  redis.call('ZADD', dis, 'GT', ARGV[i + 1], ARGV[i])
  i = i + 2
end
redis.call('ZREMRANGEBYSCORE', dis, '-inf', now)
over = redis.call('ZCARD', dis) - tonumber(ARGV[4])
if over > 0 then redis.call('ZPOPMIN', dis, over) end
redis.call('INCR', ver)
for _, key in ipairs({rows, used, ver}) do redis.call('EXPIRE', key, ttl) end
local last = redis.call('ZRANGE', dis, -1, -1, 'WITHSCORES')
if #last > 0 then redis.call('EXPIRE', dis, math.max(ttl, math.ceil(tonumber(last[2]) - now))) end
return 1
"""
)

# A bounded read of several keys in one round trip. ARGV: 4 per key: kind (h: hash, z: zset
# members scoring above the 4th value, s: string), most entries (or bytes, for a string),
# longest field name/member, longest value. Per key {status, flat data}: 0 read (absent: no
# data), 1 another type, 2 over the bound; entries with a name or value over the bound are
# left out. What crosses the wire is bounded whatever the key holds.
BOUNDED_READ = """
local out = {}
local want = {h = 'hash', z = 'zset', s = 'string'}
for i, key in ipairs(KEYS) do
  local j = (i - 1) * 4
  local kind, most, name, width = ARGV[j + 1], tonumber(ARGV[j + 2]), tonumber(ARGV[j + 3]), tonumber(ARGV[j + 4])
  local t = redis.call('TYPE', key)['ok']
  if t == 'none' then out[i] = {0, {}}
  elseif t ~= want[kind] then out[i] = {1, {}}
  elseif kind == 's' then
    if redis.call('STRLEN', key) > most then out[i] = {2, {}} else out[i] = {0, {redis.call('GET', key)}} end
  elseif kind == 'h' then
    if redis.call('HLEN', key) > most then out[i] = {2, {}} else
      local raw, kept = redis.call('HGETALL', key), {}
      for n = 1, #raw, 2 do
        if #raw[n] <= name and #raw[n + 1] <= width then kept[#kept + 1] = raw[n]; kept[#kept + 1] = raw[n + 1] end
      end
      out[i] = {0, kept}
    end
  else
    if redis.call('ZCARD', key) > most then out[i] = {2, {}} else
      local raw, kept = redis.call('ZRANGEBYSCORE', key, ARGV[j + 4], '+inf', 'WITHSCORES'), {}
      for n = 1, #raw, 2 do
        if #raw[n] <= name then kept[#kept + 1] = raw[n]; kept[#kept + 1] = raw[n + 1] end
      end
      out[i] = {0, kept}
    end
  end
end
return out
"""


#: A failure class as the router names them (a store value that is not one is not shown).
_CLASS = re.compile(r"[a-z_]{1,32}")
#: An intent name; a path holds no control character and at most 1024 characters (as the
#: knowledge file accepts): what a hostile store returns cannot forge a ledger line.
_INTENT = re.compile(r"[A-Za-z]{1,32}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def as_member(value: bytes | str) -> tuple[str, str] | None:
    intent, _, path = as_text(value).partition(":")
    if not _INTENT.fullmatch(intent) or not path or len(path) > 1024 or _CONTROL.search(path):
        return None
    return intent, path


def cooldown_of(value: bytes | None, left_ms: int | None) -> tuple[str, float] | None:
    """``(failure class, seconds left)`` from a cooldown key's value and ``PTTL``."""
    if value is None or left_ms is None or left_ms <= 0:
        return None
    cls = as_text(value)
    return (cls if _CLASS.fullmatch(cls) else "cooldown"), min(left_ms / 1000, 86_400.0)


def as_finite(value: bytes | str | float) -> float:
    """A number from the store; anything unparsable or non-finite is 0."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return 0.0
    return x if math.isfinite(x) else 0.0


def as_score(value: bytes | str | float) -> float:
    """A zset score from the store (``inf`` allowed by Redis): non-finite reads as not finite."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def as_count(value: float) -> int:
    return int(min(max(value, 0.0), 1e12))


def as_text(value: bytes | str) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value
