// One endpoint that never answers and one healthy endpoint under a burst: the dead one holds at most
// PAYWATCH_ENDPOINT_CONCURRENCY attempts, and every healthy delivery arrives before the first attempt
// to the dead one has even timed out (no head-of-line blocking).
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../support/service.ts'
import { insertCompleted, startReceiver, type Receiver } from '../callbacks/support.ts'

const BURST = 100
const TIMEOUT_S = 5
let service: TestService
let healthy: Receiver
let dead: Server
let deadUrl: string
let open = 0
let maxOpen = 0
let deadArrivals = 0
let firstDeadAt = 0

before(async () => {
  healthy = await startReceiver(() => ({ status: 200 }))
  // Takes every request and never answers: each attempt ends at the callback timeout.
  dead = createServer((request) => {
    open++
    deadArrivals++
    firstDeadAt ||= performance.now()
    maxOpen = Math.max(maxOpen, open)
    request.socket.on('close', () => open--)
  })
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve))
  deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`
  service = await startTestService({
    env: { PAYWATCH_CALLBACK_TIMEOUT: String(TIMEOUT_S), PAYWATCH_ENDPOINT_CONCURRENCY: '10' },
    callbacks: { pollMs: 25 },
  })
})
after(async () => {
  await service?.close()
  await healthy?.close()
  dead?.closeAllConnections()
  await new Promise((resolve) => dead?.close(resolve))
})

test('a dead endpoint holds at most its 10 slots; the healthy one is served meanwhile', async () => {
  const { accountId } = await service.newAccount()
  const db = service.database.db
  // Interleaved, all due at once: the dead endpoint's deliveries come first in every claim.
  for (let i = 0; i < BURST; i++) {
    await insertCompleted(db, accountId, { callback: `${deadUrl}/cb/${i}` })
    await insertCompleted(db, accountId, { callback: `${healthy.url}/cb/${i}` })
  }
  const started = performance.now()
  service.callbacks.worker.wake()
  await healthy.waitFor(BURST, TIMEOUT_S * 1000)
  const lastHealthy = Math.max(...healthy.received.map((got) => got.at))
  assert.ok(deadArrivals > 0, 'the dead endpoint was attempted')
  assert.ok(
    lastHealthy < firstDeadAt + TIMEOUT_S * 1000,
    `every healthy delivery (last after ${Math.round(lastHealthy - started)} ms) arrived before the first dead attempt timed out`,
  )
  assert.ok(maxOpen <= 10, `at most 10 attempts at once to the dead endpoint (saw ${maxOpen})`)
  assert.equal(open <= 10 && deadArrivals <= 10, true, `only its share was attempted (${deadArrivals})`)
})
