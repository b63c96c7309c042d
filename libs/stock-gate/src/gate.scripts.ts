/**
 * Lua scripts of the gate. Redis runs a script atomically, so "check every counter, then take" cannot
 * interleave with another checkout: the counter never goes below 0 and never sells a unit twice.
 *
 * Keys of one tenant share the hash tag `{tenant}`, so a multi-line take stays in one slot on a cluster.
 */

/**
 * KEYS[1] = holds hash, KEYS[2] = answered set, KEYS[3..n+2] = counters of the lines; ARGV[1] = hold id,
 * ARGV[2] = now in ms ('' to skip the answered set), ARGV[3..n+2] = quantities, ARGV[n+3..2n+2] = skus.
 * Replies {'already-held'} | {'answered'} | {'not-gated'} | {'insufficient', sku, remaining} | {'granted', sku...}.
 * A hold id in the answered set with an expiry after now is a checkout that has an answer to replay: it takes
 * nothing, whatever the counters say.
 */
export const TAKE_LUA = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {'already-held'} end
if ARGV[2] ~= '' then
  local until_ms = redis.call('ZSCORE', KEYS[2], ARGV[1])
  if until_ms and tonumber(until_ms) > tonumber(ARGV[2]) then return {'answered'} end
end
local n = #KEYS - 2
local gated = {}
for i = 1, n do
  local v = redis.call('GET', KEYS[i + 2])
  if v then
    if tonumber(v) < tonumber(ARGV[i + 2]) then return {'insufficient', ARGV[n + 2 + i], v} end
    gated[#gated + 1] = i
  end
end
if #gated == 0 then return {'not-gated'} end
local hold = {}
local reply = {'granted'}
for _, i in ipairs(gated) do
  redis.call('DECRBY', KEYS[i + 2], ARGV[i + 2])
  hold[#hold + 1] = {ARGV[n + 2 + i], tonumber(ARGV[i + 2])}
  reply[#reply + 1] = ARGV[n + 2 + i]
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(hold))
return reply
`;

/**
 * KEYS[1] = holds hash, KEYS[2..] = counters of the held skus (in the hold's order); ARGV[1] = hold id,
 * ARGV[2] = the hold as the caller read it. Gives every unit back once: the hold is deleted in the same
 * script, so a retry or a second instance finds nothing to return. A disabled SKU (no counter) is not
 * recreated. Replies 1 (returned), 0 (nothing held), -1 (the hold changed meanwhile: read again).
 */
export const GIVE_BACK_LUA = `
local hold = redis.call('HGET', KEYS[1], ARGV[1])
if not hold then return 0 end
if hold ~= ARGV[2] then return -1 end
redis.call('HDEL', KEYS[1], ARGV[1])
local lines = cjson.decode(hold)
for i, line in ipairs(lines) do
  if redis.call('EXISTS', KEYS[i + 1]) == 1 then redis.call('INCRBY', KEYS[i + 1], line[2]) end
end
return 1
`;

/**
 * KEYS[1] = answered set; ARGV[1] = now in ms, ARGV[2..] = pairs of (until in ms, hold id). Drops the marks
 * past their time, then adds these (an existing mark only ever gets later). Replies the number added.
 */
export const MARK_ANSWERED_LUA = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if #ARGV < 3 then return 0 end
return redis.call('ZADD', KEYS[1], 'GT', unpack(ARGV, 2))
`;

/** KEYS[1] = counter; ARGV[1] = the database's available units. Only re-syncs a gate that is on. */
export const RESYNC_LUA = `
local before = redis.call('GET', KEYS[1])
if not before then return false end
redis.call('SET', KEYS[1], ARGV[1])
return before
`;
