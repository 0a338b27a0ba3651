import { createHash } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import type { Tracking } from '../domain/tracking.ts'

export type DecorateRecord = (tracking: Tracking, body: string, reply: FastifyReply) => Promise<void>

const DEFAULT_ENTRIES = 20_000

/**
 * Remembers the headers a record decoration set for an exact body (the `x-signature`: an RSA
 * signature costs about a millisecond of CPU, more than the rest of a read). A record read again
 * unchanged gets the same headers without signing again; any change to the record changes its body.
 * Decorations must only set headers, through `reply.header`.
 */
export function cacheDecorations(decorate: DecorateRecord, maxEntries = DEFAULT_ENTRIES): DecorateRecord {
  const cache = new Map<string, [string, string][]>()
  return async (tracking, body, reply) => {
    const key = createHash('sha256').update(`${tracking.id}\n${tracking.integrationId ?? ''}\n${body}`).digest('base64')
    let headers = cache.get(key)
    if (headers) {
      // Least recently used first: a hit moves to the end.
      cache.delete(key)
    } else {
      const recorded: [string, string][] = []
      const recorder = { header: (name: string, value: unknown) => (recorded.push([name, String(value)]), recorder) }
      await decorate(tracking, body, recorder as unknown as FastifyReply)
      headers = recorded
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!)
    }
    cache.set(key, headers)
    for (const [name, value] of headers) reply.header(name, value)
  }
}
