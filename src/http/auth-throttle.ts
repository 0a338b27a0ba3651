import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { clientAddress } from '../common/client-address.ts'
import { systemClock, type Clock } from '../common/clock.ts'
import { rateLimited, type HttpProblem } from './problem.ts'

const WINDOW_SEC = 60
/** Addresses with a recent failure on this node, the only ones whose counter is read before a request. */
const SUSPECTS_MAX = 100_000

/**
 * Failed authentication per client address: at most `limit` failures (a 401 to a request that carried an
 * API key, access token or admin token) a minute; beyond that the address gets 429 for every credentialed
 * request until the minute ends, before any key is looked up, so guessing keys costs no database work.
 * Counted in Redis when there is one (the failures on all nodes add up), else in memory.
 *
 * Only an address that failed recently on this node has its counter read before a request: the requests of
 * clients that authenticate properly cost nothing extra, not even a Redis round trip.
 *
 * An IPv6 client is counted by its /64, as the widget sockets are (src/common/client-address.ts): a guesser
 * holding a whole /64 does not get a fresh count with every address of it.
 */
export function createAuthThrottle(limit: number, redis?: Redis, clock: Clock = systemClock) {
  const failures: RateLimiterAbstract = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        points: limit,
        duration: WINDOW_SEC,
        keyPrefix: 'paywatch:authfail',
        useRedisPackage: false,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ points: limit, duration: WINDOW_SEC, keyPrefix: 'authfail' }),
      })
    : new RateLimiterMemory({ points: limit, duration: WINDOW_SEC, keyPrefix: 'authfail' })
  const suspects = new Map<string, number>()

  const tooMany = (msBeforeNext: number): HttpProblem => {
    const retry = Math.max(1, Math.ceil(msBeforeNext / 1000))
    return rateLimited(`too many failed authentications from this address; retry in ${retry} s`, {
      'retry-after': String(retry),
      'ratelimit-limit': String(limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(retry),
    })
  }

  /** Throws a 429 problem when `address` is over its failures. */
  const checkAddress = async (ip: string): Promise<void> => {
    const address = clientAddress(ip)
    const until = suspects.get(address)
    if (until === undefined) return
    if (until < clock().getTime()) {
      suspects.delete(address)
      return
    }
    const state = await failures.get(address).catch(() => null)
    if (state && state.consumedPoints >= limit) throw tooMany(state.msBeforeNext)
  }
  /** Counts one failed authentication from `address`. */
  const failedAddress = async (ip: string): Promise<void> => {
    const address = clientAddress(ip)
    suspects.delete(address) // re-inserted last: the map is evicted oldest first
    if (suspects.size >= SUSPECTS_MAX) suspects.delete(suspects.keys().next().value!)
    suspects.set(address, clock().getTime() + WINDOW_SEC * 1000)
    await failures.consume(address).catch(() => {}) // over the limit already: nothing more to count
  }

  return {
    /** Throws a 429 problem when the request's address is over its failures. */
    async check(request: FastifyRequest): Promise<void> {
      if (carriesCredentials(request)) await checkAddress(request.ip)
    },
    /** Counts a 401 answer to a request that carried credentials. */
    async failed(request: FastifyRequest): Promise<void> {
      if (carriesCredentials(request)) await failedAddress(request.ip)
    },
    /** For credentials that come another way (the dashboard's sign-in form): the same counter per address. */
    checkAddress,
    failedAddress,
  }
}

export type AuthThrottle = ReturnType<typeof createAuthThrottle>

/** A request without any credential is answered 401 without a lookup: it is not a guess. */
const carriesCredentials = (request: FastifyRequest): boolean =>
  request.headers['x-api-key'] !== undefined || request.headers.authorization !== undefined
