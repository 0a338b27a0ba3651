// PAYWATCH_CABLE_MAX_CONNECTIONS: past the cap a widget's upgrade is refused with a 503 problem, and a
// closed socket frees its place.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { connectCable, refusedUpgrade, type TestCableClient } from '../support/cable-client.ts'
import { startTestService, type TestService } from '../support/service.ts'

let service: TestService
let baseUrl: string
before(async () => {
  service = await startTestService({ background: false, env: { PAYWATCH_CABLE_MAX_CONNECTIONS: '2' } })
  baseUrl = await service.listen()
})
after(async () => {
  await service?.close()
})

/** Connects as soon as the server has seen earlier sockets close (shortly after their clients do). */
async function connectOnceFree(): Promise<TestCableClient> {
  const deadline = Date.now() + 5000
  for (;;) {
    try {
      return await connectCable(baseUrl)
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
}

test('the connection past the cap is a 503 CABLE_FULL with Retry-After; a closed socket frees its place', async () => {
  const open: TestCableClient[] = [await connectOnceFree(), await connectOnceFree()]
  const refused = await refusedUpgrade(baseUrl)
  assert.equal(refused.status, 503)
  assert.equal(refused.headers['retry-after'], '5')
  assert.match(String(refused.headers['content-type']), /^application\/problem\+json/)
  assert.equal(JSON.parse(refused.body).code, 'CABLE_FULL')

  await open.shift()!.close()
  const admitted = await connectOnceFree()
  open.push(admitted)
  assert.equal((await admitted.next()).type, 'welcome')
  await Promise.all(open.map((client) => client.close()))
})

test('a plain GET /cable is still a 426 while the node is full', async () => {
  const open = [await connectOnceFree(), await connectOnceFree()]
  const res = await service.app.inject({ method: 'GET', url: '/cable' })
  assert.equal(res.statusCode, 426)
  await Promise.all(open.map((client) => client.close()))
})
