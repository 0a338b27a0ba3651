import type { FastifyRequest } from 'fastify'
import type { Clock } from '../common/clock.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { authenticateApiKey } from '../store/api-keys.ts'
import { hashSecret } from '../store/ids.ts'
import { problem } from './problem.ts'

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
/** Unknown keys are remembered longer: a key is random, so one unknown now is unknown for ever, unless created here (forgotten at once) or by another process (this long at most). */
const UNKNOWN_MS = 60_000
const UNKNOWN_MAX = 10_000

/**
 * API key authentication with a short in-memory cache, so that a busy key costs one lookup every few
 * seconds. Revocation through this process clears the cache at once; on other nodes it takes
 * effect within CACHE_MS. Unknown keys are remembered by hash (not in clear), so that a client
 * repeating a wrong key costs no database lookup each time.
 */
export function createApiKeyAuth(db: Db, clock: Clock) {
  const cache = new Map<string, { caller: Caller; until: number }>()
  const unknown = new Map<string, number>()

  async function lookup(key: string): Promise<Caller | undefined> {
    const now = clock().getTime()
    const hit = cache.get(key)
    if (hit && hit.until > now) return hit.caller
    const hash = hashSecret(key).toString('hex')
    const unknownUntil = unknown.get(hash)
    if (unknownUntil !== undefined && unknownUntil > now) return undefined
    const caller = await authenticateApiKey(db, key)
    if (caller) {
      if (cache.size >= CACHE_MAX) cache.clear()
      cache.set(key, { caller, until: now + CACHE_MS })
    } else {
      unknown.delete(hash) // re-inserted last: the map is evicted oldest first
      if (unknown.size >= UNKNOWN_MAX) unknown.delete(unknown.keys().next().value!)
      unknown.set(hash, now + UNKNOWN_MS)
    }
    return caller
  }

  return {
    async authenticate(request: FastifyRequest): Promise<Caller> {
      const raw = request.headers['x-api-key']
      const key = Array.isArray(raw) ? raw[0] : raw
      if (!key) throw problem('UNAUTHORIZED', 'send your API key in the x-api-key header')
      const caller = key.length <= 200 ? await lookup(key) : undefined
      if (!caller) throw problem('UNAUTHORIZED', 'the API key is unknown or revoked')
      request.caller = caller
      return caller
    },
    forgetKey(keyId: string): void {
      for (const [key, entry] of cache) if (entry.caller.keyId === keyId) cache.delete(key)
    },
    /** A key just created must work at once, even if a client tried it before. */
    forgetUnknown(key: string): void {
      unknown.delete(hashSecret(key).toString('hex'))
    },
  }
}

export type ApiKeyAuth = ReturnType<typeof createApiKeyAuth>

/** The authenticated caller of a route behind the API key hook. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw problem('UNAUTHORIZED', 'send your API key in the x-api-key header')
  return request.caller
}
