// One retry model (docs/architecture.md, "Failures and retries"): RPC failures are typed once, in the
// transport; every retry site asks isRetryable, which reads the first typed error of the cause chain (walk);
// Retry-After is read one way; every delay is in the backoff table; "sleep until woken" is written once.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { createPublicClient, http, UnknownRpcError } from 'viem'
import { isTransient, NonRetryableChainError, RetryableChainError } from '../../src/chain/errors.ts'
import { failover } from '../../src/chain/failover-transport.ts'
import { rpcFailureFields } from '../../src/chain/rpc-failure.ts'
import { backoffPolicies, retryAfterMs } from '../../src/common/backoff.ts'
import { isRetryable, NonRetryableError, RetryableError, walk } from '../../src/common/errors.ts'
import { createWakeSignal } from '../../src/common/wake-signal.ts'
import { DEFAULT_LEASE_RETRY_MS } from '../../src/engine/leader-lock.ts'

test('walk: the error itself first, then its causes; the innermost without a matcher; cycles end', () => {
  const inner = new Error('socket hang up')
  const middle = new RetryableChainError('no RPC provider answered', { cause: inner })
  const outer = new UnknownRpcError(middle)
  assert.equal(
    walk(outer, (e) => e instanceof RetryableChainError),
    middle,
  )
  assert.equal(walk(outer), inner)
  assert.equal(middle.walk(), inner)
  assert.equal(
    walk(outer, (e) => e instanceof NonRetryableError),
    null,
  )
  const cyclic = new Error('a') as Error & { cause?: unknown }
  cyclic.cause = new Error('b', { cause: cyclic })
  assert.equal(
    walk(cyclic, () => false),
    null,
  )
})

test('isRetryable: the first typed error of the chain decides, through any wrapper; an unknown error is retryable', () => {
  assert.equal(isRetryable(new UnknownRpcError(new NonRetryableChainError('the answer is final'))), false)
  assert.equal(isRetryable(new UnknownRpcError(new RetryableChainError('down'))), true)
  // The outer typed error decides: a retryable failure whose cause was final is still retried.
  assert.equal(isRetryable(new RetryableError('retry the batch', { cause: new NonRetryableError('one item') })), true)
  assert.equal(isRetryable(new Error('a bug or a database hiccup')), true)
  assert.equal(isRetryable('thrown text'), true)
})

let server: Server
let url: string
before(async () => {
  server = createServer((request, response) => {
    request.resume()
    response.writeHead(503, { 'content-type': 'text/plain' }).end('overloaded')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
after(() => server?.close())

test('the transport types an endpoint failure once: a RetryableChainError, seen through viem as transient and retryable', async () => {
  const client = createPublicClient({ transport: failover([http(url, { retryCount: 0 })], { retryRounds: 0 }) })
  const error = await client.getBlockNumber().then(
    () => assert.fail('a 503 is not a block number'),
    (e: unknown) => e,
  )
  assert.ok(
    walk(error, (e) => e instanceof RetryableChainError),
    'typed in the transport',
  )
  assert.equal(isRetryable(error), true)
  assert.equal(isTransient(error), true)
  // The log line still names the provider and the HTTP status under the typed error.
  const fields = rpcFailureFields(error)
  assert.equal(fields.provider, new URL(url).host)
  assert.match(fields.error, /no RPC provider answered/)
})

test('Retry-After is read one way: delta-seconds or an HTTP date, anything else unreadable', () => {
  const now = Date.parse('2026-11-25T10:00:00Z')
  assert.equal(retryAfterMs(' 3 ', now), 3_000)
  assert.equal(retryAfterMs('Wed, 25 Nov 2026 10:00:07 GMT', now), 7_000)
  assert.equal(retryAfterMs('Wed, 25 Nov 2026 09:00:00 GMT', now), 0)
  for (const unreadable of ['1.5', '-2', 'soon', '', null, undefined])
    assert.equal(retryAfterMs(unreadable, now), undefined, String(unreadable))
})

test('the fixed pauses are in the backoff table too', () => {
  assert.deepEqual(backoffPolicies.leaseRetry.delaysMs, [1_000])
  assert.deepEqual(backoffPolicies.headResubscribe.delaysMs, [5_000])
  assert.equal(DEFAULT_LEASE_RETRY_MS, backoffPolicies.leaseRetry.delaysMs[0])
})

test('sleep until woken: a wake ends a sleep, a wake before a sleep is kept, an abort ends it too', async () => {
  const signal = createWakeSignal()
  const sleeping = signal.sleep(3_600_000)
  signal.wake()
  await sleeping
  signal.wake()
  await signal.sleep(3_600_000) // the kept wake: at once
  const controller = new AbortController()
  const aborted = signal.sleep(3_600_000, controller.signal)
  controller.abort()
  await aborted
  await signal.sleep(3_600_000, controller.signal) // already aborted: at once
  // The kept wake was used once: a sleep now waits for its time (here a short one).
  let ended = false
  const waiting = signal.sleep(20).then(() => (ended = true))
  assert.equal(ended, false)
  await waiting
  assert.equal(ended, true)
})
