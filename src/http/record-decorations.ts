import { createHash } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import type { DecorateRecord } from '../common/subsystem.ts'

export type { DecorateRecord }

/**
 * Bodies remembered (~700 bytes of heap each, the signature most of it): enough for the records a node's
 * clients poll at once. 20,000 held ~14 MB under a steady read load (bench:soak), ~20 MB of RSS with
 * the heap's headroom.
 */
export const DEFAULT_DECORATION_ENTRIES = 5_000

/**
 * Remembers the headers a record decoration set for an exact body (the `x-signature`: an RSA
 * signature costs about a millisecond of CPU, more than the rest of a read). A record read again
 * unchanged gets the same headers without signing again; any change to the record changes its body.
 * Decorations must only set headers, through `reply.header`.
 */
export function cacheDecorations(decorate: DecorateRecord, maxEntries = DEFAULT_DECORATION_ENTRIES): DecorateRecord {
  const cache = new Map<string, [string, string][]>()
  return async (tracking, body, reply) => {
    const key = createHash('sha256')
      .update(`${tracking.id}\n${tracking.integrationId ?? ''}\n${body}`)
      .digest('base64')
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
