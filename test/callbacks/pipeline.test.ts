// The attempt pipeline on its own: a signer and a sender that answer when the test says so, so the
// limits on requests in flight (overall and per host) can be observed exactly.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createAttemptPipeline } from '../../src/callbacks/pipeline.ts'
import type { SendResult } from '../../src/callbacks/sender.ts'
import type { CallbackSigner } from '../../src/callbacks/signer.ts'
import type { ClaimedDelivery } from '../../src/store/deliveries.ts'
import { testTracking } from '../support/trackings.ts'

const signer: CallbackSigner = { servicePublicKeyPem: '', sign: async () => 'signature', signCached: async () => 'signature' }
const ok: SendResult = { durationMs: 1, statusCode: 200, error: null, failure: null, excerpt: null, forwardTo: null }

/** A delivery to `https://<host>.example/<id>`: the host is what the limits count, the path tells deliveries apart. */
function delivery(id: string, host: string): ClaimedDelivery {
  const tracking = testTracking('a', { id, secretId: id, status: 'success', callback: `https://${host}.example/${id}` })
  return { id, trackingId: id, claim: 'c', attempts: 0, tracking }
}

test('with many hosts, requests stay within the overall and per-host limits, and a freed slot serves a waiting host', async () => {
  const open = new Map<string, (result: SendResult) => void>()
  const inFlightByHost = new Map<string, number>()
  let maxInFlight = 0
  let maxPerHost = 0
  const sender = {
    send: (url: string) =>
      new Promise<SendResult>((resolve) => {
        const host = new URL(url).hostname.split('.')[0]!
        inFlightByHost.set(host, (inFlightByHost.get(host) ?? 0) + 1)
        maxInFlight = Math.max(maxInFlight, open.size + 1)
        maxPerHost = Math.max(maxPerHost, inFlightByHost.get(host)!)
        open.set(url, (result) => {
          open.delete(url)
          inFlightByHost.set(host, inFlightByHost.get(host)! - 1)
          resolve(result)
        })
      }),
    close() {},
  }
  const pipeline = createAttemptPipeline({ signer, sender, clock: () => new Date(0), concurrency: 4, perHost: 2, signing: 8 })
  const finished: string[] = []
  // 50 hosts with 3 deliveries each.
  for (let h = 0; h < 50; h++) {
    for (let n = 0; n < 3; n++) {
      const d = delivery(`d${h}-${n}`, `host${h}`)
      pipeline.push(d, `host${h}`, () => finished.push(d.id))
    }
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve))
  await settle()
  assert.equal(open.size, 4, 'the overall limit is filled')
  while (finished.length < 150) {
    const [first] = open.values()
    assert.ok(first, `nothing in flight after ${finished.length} answers: a waiting host was not served`)
    first(ok)
    await settle()
    await settle()
  }
  assert.equal(maxInFlight, 4)
  assert.ok(maxPerHost <= 2, `at most 2 per host, saw ${maxPerHost}`)
  assert.equal(pipeline.load('host0'), 0)
})

test('started() resolves once every pushed delivery has its request handed to the sender, or will not be sent', async () => {
  const sent: string[] = []
  const answers: ((result: SendResult) => void)[] = []
  const sender = {
    send: (url: string) =>
      new Promise<SendResult>((resolve) => {
        sent.push(url)
        answers.push(resolve)
      }),
    close() {},
  }
  // One slot to the host: the second delivery waits for the first one's answer.
  const pipeline = createAttemptPipeline({ signer, sender, clock: () => new Date(0), concurrency: 4, perHost: 1, signing: 8 })
  await pipeline.started()
  let started = false
  pipeline.push(delivery('first', 'shop'), 'shop', () => {})
  pipeline.push(delivery('second', 'shop'), 'shop', () => {})
  const noCallback = delivery('silent', 'shop')
  pipeline.push({ ...noCallback, tracking: { ...noCallback.tracking, callback: null } }, 'shop', () => {})
  void pipeline.started().then(() => (started = true))
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
  assert.equal(sent.length, 1)
  assert.equal(started, false, 'the second is still waiting for its slot')
  answers[0]!(ok)
  for (let i = 0; i < 5 && !started; i++) await new Promise((resolve) => setImmediate(resolve))
  assert.equal(sent.length, 2)
  assert.equal(started, true, 'both sent, and the one without a callback will not be')
})
