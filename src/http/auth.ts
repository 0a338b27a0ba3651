import type { FastifyRequest } from 'fastify'
import type { Clock } from '../common.ts'
import type { Db } from '../store/database.ts'
import { authenticateApiKey } from '../store/api-keys.ts'
import { HttpProblem } from './problem.ts'

export interface Caller {
  keyId: string
  accountId: string
}

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller
  }
}

const CACHE_MS = 5_000
const CACHE_MAX = 10_000

/**
 * API key authentication with a short in-memory cache, so that a busy key costs one lookup every few
 * seconds. Revocation through this process clears the cache at once; on other nodes it takes
 * effect within CACHE_MS.
 */
export function createApiKeyAuth(db: Db, clock: Clock) {
  const cache = new Map<string, { caller: Caller | undefined; until: number }>()

  async function lookup(key: string): Promise<Caller | undefined> {
    const now = clock().getTime()
    const hit = cache.get(key)
    if (hit && hit.until > now) return hit.caller
    const caller = await authenticateApiKey(db, key)
    if (cache.size >= CACHE_MAX) cache.clear()
    cache.set(key, { caller, until: now + CACHE_MS })
    return caller
  }

  return {
    async authenticate(request: FastifyRequest): Promise<Caller> {
      const raw = request.headers['x-api-key']
      const key = Array.isArray(raw) ? raw[0] : raw
      if (!key) throw new HttpProblem(401, 'UNAUTHORIZED', 'send your API key in the x-api-key header')
      const caller = key.length <= 200 ? await lookup(key) : undefined
      if (!caller) throw new HttpProblem(401, 'UNAUTHORIZED', 'the API key is unknown or revoked')
      request.caller = caller
      return caller
    },
    forgetKey(keyId: string): void {
      for (const [key, entry] of cache) if (entry.caller?.keyId === keyId) cache.delete(key)
    },
  }
}

export type ApiKeyAuth = ReturnType<typeof createApiKeyAuth>

/** The authenticated caller of a route behind the API key hook. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new HttpProblem(401, 'UNAUTHORIZED', 'send your API key in the x-api-key header')
  return request.caller
}
