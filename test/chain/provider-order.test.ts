// The order providers are asked in. A provider's lag is judged against the best head of the moment its
// own head was shown: heads are shown at different moments (newHeads on one provider, a probe every few
// seconds on another), and a provider probed a moment before a new block is not behind. HTTP providers
// go before WebSocket ones while healthy.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pino from 'pino'
import { ProviderPool } from '../../src/chain/provider-pool.ts'
import { manualClock } from '../support/clock.ts'

function twoProviders() {
  const clock = manualClock()
  const pool = new ProviderPool({
    chain: 'ethereum',
    urls: ['http://127.0.0.1:1/', 'ws://127.0.0.1:1/'],
    rps: [null, null],
    clock,
    logger: pino({ level: 'silent' }),
  })
  return { pool, clock }
}

test('a provider level with the best head when it showed its head is not lagging while that is recent', () => {
  const { pool, clock } = twoProviders()
  pool.noteHead(0, 100n)
  pool.noteHead(1, 100n)
  // The pushing provider moves on between two probes of the other.
  pool.noteHead(1, 101n)
  pool.noteHead(1, 102n)
  pool.noteHead(1, 103n)
  assert.equal(pool.stateOf(0), 'ok')
  assert.deepEqual(pool.order(), [0, 1])
  // Not shown again for long: its distance to the best head now counts.
  clock.advance(16_000)
  assert.equal(pool.stateOf(0), 'lagging')
  assert.deepEqual(pool.order(), [1, 0])
  // Shown again, level: ok at once.
  pool.noteHead(0, 103n)
  assert.equal(pool.stateOf(0), 'ok')
})

test('a provider behind the best head when it shows its head is lagging at once', () => {
  const { pool } = twoProviders()
  pool.noteHead(1, 110n)
  pool.noteHead(0, 105n)
  assert.equal(pool.stateOf(0), 'lagging')
  assert.equal(pool.view()[0]!.lag, 5)
  // One block behind is not lagging (a block may arrive between two reads).
  pool.noteHead(0, 109n)
  assert.equal(pool.stateOf(0), 'ok')
})

test('a healthy HTTP provider is asked before a WebSocket one, even when the WebSocket answered faster', () => {
  const { pool } = twoProviders()
  pool.noteHead(0, 100n)
  pool.noteHead(1, 100n)
  for (let n = 0; n < 5; n++) {
    pool.observe(0, { method: 'eth_getBlockByNumber', endpoint: 0, ok: true, durationMs: 20 })
    pool.observe(1, { method: 'eth_getBlockByNumber', endpoint: 1, ok: true, durationMs: 2 })
  }
  assert.deepEqual(pool.order(), [0, 1])
  // The HTTP provider failing: the WebSocket one is asked first.
  for (let n = 0; n < 3; n++)
    pool.observe(0, { method: 'eth_getBlockByNumber', endpoint: 0, ok: false, durationMs: 5, error: new Error('down') })
  assert.deepEqual(pool.order(), [1, 0])
})
