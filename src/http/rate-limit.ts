import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { RateLimitConfig } from '../config/config.ts'
import { rateLimited, type HttpProblem } from './problem.ts'

export interface RateDecision {
  headers: Record<string, string>
}

/**
 * Per-key limits (docs/api.md, records and endpoints): requests per second, per day, and in flight. Counters
 * live in memory, or in Redis when several nodes serve the same keys.
 */
export function createRateLimits(config: RateLimitConfig, redis?: Redis) {
  // While Redis is unreachable each node counts on its own (the insurance limiter) rather than failing requests.
  const make = (points: number, duration: number, prefix: string): RateLimiterAbstract =>
    redis
      ? new RateLimiterRedis({
          storeClient: redis,
          points,
          duration,
          keyPrefix: `paywatch:${prefix}`,
          useRedisPackage: false,
          rejectIfRedisNotReady: true,
          insuranceLimiter: new RateLimiterMemory({ points, duration, keyPrefix: prefix }),
        })
      : new RateLimiterMemory({ points, duration, keyPrefix: prefix })
  const perSecond = make(config.rps, 1, 'rps')
  const perDay = make(config.daily, 86_400, 'daily')
  const inFlight = createInFlightCounter(config.parallel, redis)

  const headers = (limit: number, res: RateLimiterRes): Record<string, string> => ({
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(Math.max(0, res.remainingPoints)),
    'ratelimit-reset': String(Math.max(1, Math.ceil(res.msBeforeNext / 1000))),
  })
  const refuse = (what: string, limit: number, res: RateLimiterRes): HttpProblem => {
    const retry = Math.max(1, Math.ceil(res.msBeforeNext / 1000))
    return rateLimited(`over the limit of ${limit} ${what} for this API key; retry in ${retry} s`, {
      ...headers(limit, res),
      'retry-after': String(retry),
    })
  }

  return {
    /** Takes one request from the key's per-second and daily budgets or throws a 429 problem. */
    async admit(keyId: string): Promise<RateDecision> {
      let second: RateLimiterRes
      try {
        second = await perSecond.consume(keyId)
      } catch (res) {
        if (res instanceof RateLimiterRes) throw refuse('requests per second', config.rps, res)
        throw res
      }
      let day: RateLimiterRes
      try {
        day = await perDay.consume(keyId)
      } catch (res) {
        if (res instanceof RateLimiterRes) throw refuse('requests per day', config.daily, res)
        throw res
      }
      // The headers describe the budget closest to running out, so a client sees the daily one ending.
      const tighter = day.remainingPoints < second.remainingPoints ? headers(config.daily, day) : headers(config.rps, second)
      return { headers: tighter }
    },
    /**
     * Takes one of the key's parallel slots or throws a 429 problem; returns the function that frees it.
     * Taken once the request has fully arrived: a client still sending its body is not work in flight, and
     * a slow sender must not keep the key's other requests out.
     */
    async occupy(keyId: string): Promise<() => void> {
      const release = await inFlight.acquire(keyId)
      if (!release) {
        // The headers describe the limit that refused: no parallel slot is left now; one may be free in a second.
        throw rateLimited(`over the limit of ${config.parallel} parallel requests for this API key`, {
          'ratelimit-limit': String(config.parallel),
          'ratelimit-remaining': '0',
          'ratelimit-reset': '1',
          'retry-after': '1',
        })
      }
      return release
    },
  }
}

export type RateLimits = ReturnType<typeof createRateLimits>

/** A parallel slot is counted for at most this long, so slots held by a crashed node free themselves. */
const SLOT_TTL_MS = 60_000

/**
 * Requests in flight per key. In Redis each request is a member of a sorted set scored by its expiry:
 * a crashed node's members lapse after SLOT_TTL_MS even while the key stays busy. When Redis is not
 * reachable the node counts its own requests.
 */
function createInFlightCounter(limit: number, redis?: Redis) {
  const local = new Map<string, number>()
  const acquireLocal = (key: string): (() => void) | undefined => {
    const count = local.get(key) ?? 0
    if (count >= limit) return undefined
    local.set(key, count + 1)
    return once(() => {
      const left = (local.get(key) ?? 1) - 1
      if (left <= 0) local.delete(key)
      else local.set(key, left)
    })
  }
  const acquireShared = async (redis: Redis, key: string): Promise<(() => void) | undefined> => {
    const redisKey = `paywatch:inflight:${key}`
    const member = randomUUID()
    // Wall time, not the injected clock: the scores are compared by every node sharing Redis, as the
    // counters of rate-limiter-flexible (which read Date.now() themselves) are.
    const now = Date.now()
    const replies = await redis
      .multi()
      .zremrangebyscore(redisKey, '-inf', now)
      .zadd(redisKey, now + SLOT_TTL_MS, member)
      .zcard(redisKey)
      .pexpire(redisKey, SLOT_TTL_MS)
      .exec()
    const count = Number(replies?.[2]?.[1] ?? 0)
    const release = once(() => void redis.zrem(redisKey, member).catch(() => {}))
    if (count > limit) {
      release()
      return undefined
    }
    return release
  }
  return {
    async acquire(key: string): Promise<(() => void) | undefined> {
      if (!redis || redis.status !== 'ready') return acquireLocal(key)
      try {
        return await acquireShared(redis, key)
      } catch {
        return acquireLocal(key)
      }
    },
  }
}

function once(fn: () => void): () => void {
  let done = false
  return () => {
    if (done) return
    done = true
    fn()
  }
}
