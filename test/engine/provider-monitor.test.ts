// The provider monitor's rounds: every interval while the follower needs them, one in six while newHeads
// feeds a synced follower (its heads show the providers serve). Timers are node:test's mocked ones.
import assert from 'node:assert/strict'
import { mock, test } from 'node:test'
import { pino } from 'pino'
import type { PublicClient } from 'viem'
import { ProviderPool } from '../../src/chain/provider-pool.ts'
import type { ChainHandle } from '../../src/chain/registry.ts'
import { createProviderMonitor } from '../../src/engine/provider-monitor.ts'

const INTERVAL_MS = 5_000

function monitored(quiet: () => boolean) {
  const asked = { heads: 0, identities: 0 }
  const client = {
    getBlockNumber: async () => {
      asked.heads++
      return 100n
    },
    // The capability probes: every method is offered.
    request: async () => null,
  } as unknown as PublicClient
  const pool = new ProviderPool({
    chain: 'monitored',
    urls: ['http://provider.invalid'],
    rps: [null],
    clock: () => new Date(),
    logger: pino({ level: 'silent' }),
  })
  const handle = { pool, providerClients: [client] } as unknown as ChainHandle
  const monitor = createProviderMonitor({
    handle,
    identity: {
      verify: async () => {
        asked.identities++
        return true
      },
    },
    logger: pino({ level: 'silent' }),
    intervalMs: INTERVAL_MS,
    quiet,
  })
  return { asked, monitor }
}

/** Lets the round started by a timer finish (its probes are promises) before the next tick. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve()
}

async function intervals(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    mock.timers.tick(INTERVAL_MS)
    await settle()
  }
}

test('while newHeads feeds a synced follower, the providers are probed every sixth interval; otherwise every interval', async (t) => {
  mock.timers.enable({ apis: ['setTimeout'] })
  t.after(() => mock.timers.reset())
  let quiet = false
  const { asked, monitor } = monitored(() => quiet)
  monitor.start()
  t.after(() => monitor.stop())
  mock.timers.tick(0)
  await settle()
  // The first round probes the head; the identity was checked by the runner at start, not again.
  assert.deepEqual(asked, { heads: 1, identities: 0 })

  await intervals(3)
  assert.deepEqual(asked, { heads: 4, identities: 3 }, 'not quiet: a round each interval')

  quiet = true
  await intervals(12)
  assert.deepEqual(asked, { heads: 6, identities: 5 }, 'quiet: one round in six intervals')

  quiet = false
  await intervals(2)
  assert.deepEqual(asked, { heads: 8, identities: 7 }, 'no longer quiet: every interval again')
})
