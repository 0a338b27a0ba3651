import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FastifyReply } from 'fastify'
import type { Tracking } from '../../src/domain/tracking.ts'
import { cacheDecorations, DEFAULT_DECORATION_ENTRIES } from '../../src/http/record-decorations.ts'

/** A decoration that counts its calls (each stands for an RSA signature) and sets one header. */
function countingDecoration() {
  const signed: string[] = []
  const decorate = cacheDecorations(async (_tracking, body, reply) => {
    signed.push(body)
    reply.header('x-signature', `signature of ${body}`)
  })
  const read = async (n: number) => {
    const headers: Record<string, string> = {}
    const reply = { header: (name: string, value: string) => ((headers[name] = value), reply) }
    await decorate({ id: `tracking-${n}`, integrationId: null } as Tracking, `{"n":${n}}`, reply as unknown as FastifyReply)
    return headers
  }
  return { signed, read }
}

describe('record decorations cache', () => {
  it('keeps at most 5,000 bodies (~3.5 MB of heap): the least recently read is signed again', async () => {
    assert.equal(DEFAULT_DECORATION_ENTRIES, 5_000)
    const { signed, read } = countingDecoration()
    for (let n = 0; n < 5_000; n++) await read(n)
    assert.equal(signed.length, 5_000)
    // Read again within the bound: every answer reuses its headers.
    await read(0)
    assert.deepEqual(await read(4_999), { 'x-signature': 'signature of {"n":4999}' })
    assert.equal(signed.length, 5_000)
    // One more body evicts the least recently read (1; 0 was read again just now).
    await read(5_000)
    await read(0)
    assert.equal(signed.length, 5_001)
    await read(1)
    assert.equal(signed.length, 5_002, 'the least recently read body was evicted and signed again')
  })
})
