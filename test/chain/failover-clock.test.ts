// The failover transport's cool-downs read the caller's clock (the service's injected one), not the
// process clock: a failing endpoint is asked last until the clock says its cool-down is over.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPublicClient, custom } from 'viem'
import { backoffPolicies } from '../../src/common/backoff.ts'
import { failover } from '../../src/chain/failover-transport.ts'
import { manualClock } from '../support/clock.ts'

test('a failed endpoint cools down by the injected clock', async () => {
  const asked: number[] = []
  let firstFails = true
  const endpoint = (index: number) =>
    custom({
      async request() {
        asked.push(index)
        if (index === 0 && firstFails) throw new Error('connection reset (test)')
        return '0x1'
      },
    })
  const clock = manualClock()
  const client = createPublicClient({ transport: failover([endpoint(0), endpoint(1)], { clock, retryRounds: 0 }) })

  await client.request({ method: 'eth_chainId' })
  assert.deepEqual(asked, [0, 1], 'the first endpoint failed, the second answered')
  firstFails = false

  asked.length = 0
  await client.request({ method: 'eth_chainId' })
  assert.deepEqual(asked, [1], 'cooling down: asked last (not at all, the other answered)')

  // Real time passing changes nothing; the clock passing the cool-down does.
  await new Promise((resolve) => setTimeout(resolve, backoffPolicies.endpointCooldown.delaysMs[0]! + 50))
  asked.length = 0
  await client.request({ method: 'eth_chainId' })
  assert.deepEqual(asked, [1], 'still cooling by the injected clock')

  clock.advance(backoffPolicies.endpointCooldown.delaysMs[0]!)
  asked.length = 0
  await client.request({ method: 'eth_chainId' })
  assert.deepEqual(asked, [0], 'the cool-down is over: asked first again')
})
