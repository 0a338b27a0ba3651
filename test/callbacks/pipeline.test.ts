// The attempt pipeline on its own: a signer and a sender that answer when the test says so, so the
// limits on requests in flight (overall and per host) can be observed exactly.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createAttemptPipeline } from '../../src/callbacks/pipeline.ts'
import type { SendResult } from '../../src/callbacks/sender.ts'
import type { CallbackSigner } from '../../src/callbacks/signer.ts'
import type { ClaimedDelivery } from '../../src/store/deliveries.ts'

const signer: CallbackSigner = { servicePublicKeyPem: '', sign: async () => 'signature', signCached: async () => 'signature' }
const ok: SendResult = { durationMs: 1, statusCode: 200, error: null, refused: false, excerpt: null, forwardTo: null }

function delivery(id: string): ClaimedDelivery {
  const now = new Date(0)
  return {
    id, trackingId: id, claim: 'c', attempts: 0,
    tracking: {
      id, accountId: 'a', secretId: id, shape: 'current', blockchain: 'ethereum', sender: `0x${'1'.repeat(40)}`, nonce: 1n,
      receiver: `0x${'2'.repeat(40)}`, token: `0x${'e'.repeat(40)}`, decimals: 18, commitment: 'confirmed', confirmations: 1,
      afterBlock: 1n, amount: '1', feeAmount: null, feeReceiver: null, transaction: null, payload: null, callback: `https://${id}.example/cb`,
      forwardTo: null, forwardOnFailure: false, integrationId: null, linkId: null, shop: null, shopifyPaymentId: null,
      status: 'success', failedReason: null, release: false, confirmedAt: now, createdAt: now, updatedAt: now,
    },
  } as ClaimedDelivery
}

test('with many hosts, requests stay within the overall and per-host limits, and a freed slot serves a waiting host', async () => {
  const open = new Map<string, (result: SendResult) => void>()
  const inFlightByHost = new Map<string, number>()
  let maxInFlight = 0
  let maxPerHost = 0
  const sender = {
    send: (url: string) => new Promise<SendResult>((resolve) => {
      const host = new URL(url).host.split('.')[0]!.replace(/-\d+$/, '')
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
  // 50 hosts with 3 deliveries each: the host name is shared, the URL tells the deliveries apart.
  for (let h = 0; h < 50; h++) {
    for (let n = 0; n < 3; n++) {
      const d = delivery(`host${h}-${n}`)
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
