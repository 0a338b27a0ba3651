import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { Redis } from 'ioredis'
import type { RateLimitConfig } from '../config/config.ts'
import { HttpProblem } from './problem.ts'

export interface RateDecision {
  headers: Record<string, string>
  /** Call when the request is finished, to free its parallel slot. */
  done(): void
}

/**
 * Per-key limits of interface.md section 8: requests per second, per day, and in flight. Counters
 * live in memory, or in Redis when several nodes serve the same keys.
 */
export function createRateLimits(config: RateLimitConfig, redis?: Redis) {
  const make = (points: number, duration: number, prefix: string): RateLimiterAbstract =>
    redis
      ? new RateLimiterRedis({ storeClient: redis, points, duration, keyPrefix: `paywatch:${prefix}`, useRedisPackage: false })
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
    return new HttpProblem(429, 'RATE_LIMITED', `over the limit of ${limit} ${what} for this API key; retry in ${retry} s`, {
      headers: { ...headers(limit, res), 'retry-after': String(retry) },
    })
  }

  return {
    /** Takes one request from the key's budgets or throws a 429 problem. */
    async admit(keyId: string): Promise<RateDecision> {
      let second: RateLimiterRes
      try {
        second = await perSecond.consume(keyId)
      } catch (res) {
        if (res instanceof RateLimiterRes) throw refuse('requests per second', config.rps, res)
        throw res
      }
      try {
        await perDay.consume(keyId)
      } catch (res) {
        if (res instanceof RateLimiterRes) throw refuse('requests per day', config.daily, res)
        throw res
      }
      const release = await inFlight.acquire(keyId)
      if (!release) {
        throw new HttpProblem(429, 'RATE_LIMITED', `over the limit of ${config.parallel} parallel requests for this API key`, {
          headers: { 'ratelimit-limit': String(config.rps), 'ratelimit-remaining': String(second.remainingPoints), 'ratelimit-reset': '1', 'retry-after': '1' },
        })
      }
      return { headers: headers(config.rps, second), done: release }
    },
  }
}

export type RateLimits = ReturnType<typeof createRateLimits>

/** Requests in flight per key; in Redis the counter expires so a crashed node cannot hold slots forever. */
function createInFlightCounter(limit: number, redis?: Redis) {
  const local = new Map<string, number>()
  return {
    async acquire(key: string): Promise<(() => void) | undefined> {
      if (redis) {
        const redisKey = `paywatch:inflight:${key}`
        const [[, count]] = (await redis.multi().incr(redisKey).expire(redisKey, 60).exec()) as [[unknown, number]]
        if (count > limit) {
          await redis.decr(redisKey)
          return undefined
        }
        let released = false
        return () => {
          if (released) return
          released = true
          redis.decr(redisKey).catch(() => {})
        }
      }
      const count = local.get(key) ?? 0
      if (count >= limit) return undefined
      local.set(key, count + 1)
      let released = false
      return () => {
        if (released) return
        released = true
        const left = (local.get(key) ?? 1) - 1
        if (left <= 0) local.delete(key)
        else local.set(key, left)
      }
    },
  }
}
