// A request must arrive within PAYWATCH_REQUEST_TIMEOUT: a client that trickles its headers or body is
// answered 408 and disconnected, and while it trickles it holds none of its key's parallel slots.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../support/service.ts'
import { trickle } from '../support/trickle.ts'

let service: TestService
let port: number
let apiKey: string
before(async () => {
  service = await startTestService({
    env: { PAYWATCH_REQUEST_TIMEOUT: '1', PAYWATCH_RATE_PARALLEL: '3', PAYWATCH_RATE_RPS: '1000' },
    background: false,
  })
  port = Number(new URL(await service.listen()).port)
  apiKey = (await service.newAccount()).apiKey
})
after(async () => {
  await service?.close()
})

const bodyHead = (key: string) =>
  `POST /v2/payments HTTP/1.1\r\nhost: localhost\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: 60000\r\n\r\n{`

/** Bounds how long the test waits for the server to act; the service's own limit is 1 s. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still open after ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer))
}

test('a trickled body is answered 408 problem+json and the connection closed', async () => {
  const slow = await trickle(port, bodyHead(apiKey))
  try {
    const answer = await within(slow.closed, 15_000, 'trickled body')
    assert.match(answer, /^HTTP\/1\.1 408 /)
    assert.match(answer, /content-type: application\/problem\+json/i)
    assert.match(answer, /"code":"REQUEST_TIMEOUT"/)
  } finally {
    slow.stop()
  }
})

test('trickled headers are answered 408 and the connection closed', async () => {
  const slow = await trickle(port, 'GET /healthz HTTP/1.1\r\nhost: localhost\r\n', { drip: 'x-slow: y\r\n' })
  try {
    const answer = await within(slow.closed, 15_000, 'trickled headers')
    assert.match(answer, /^HTTP\/1\.1 408 /)
  } finally {
    slow.stop()
  }
})

test("trickling requests hold none of the key's parallel slots, before or after their time-out", async () => {
  const slow = await Promise.all([1, 2, 3, 4].map(() => trickle(port, bodyHead(apiKey))))
  try {
    // The bodies are still arriving: the key's own requests are served.
    await new Promise((resolve) => setTimeout(resolve, 300))
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/v2/payments/none`, { headers: { 'x-api-key': apiKey } })
      assert.equal(res.status, 404, await res.text())
    }
    for (const s of slow) assert.match(await within(s.closed, 15_000, 'trickled body'), /^HTTP\/1\.1 408 /)
    const res = await fetch(`http://127.0.0.1:${port}/v2/payments/none`, { headers: { 'x-api-key': apiKey } })
    assert.equal(res.status, 404)
  } finally {
    for (const s of slow) s.stop()
  }
})
