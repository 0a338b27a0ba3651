// Link, Shopify and app endpoints over payments that the real chain engine judged on Anvil: a dozen
// link payments mined in one block page without skip or repeat; a Shopify payment becomes readable
// (own and through an app) once the engine confirms it, an underpaid one never does.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import { parseEther, type Address, type Hash } from 'viem'
import type { Tracking } from '../../src/domain/tracking.ts'
import { mine, startAnvil, type Anvil, type AnvilAccount } from '../support/index.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { assertProblem, connectShop, createLink, HIGH_LIMITS, NATIVE, VERSION, type Account } from './support.ts'

let anvil: Anvil
let service: TestService
let merchant: Account
let developer: Account
let linkId: string
let accessToken: string

before(async () => {
  anvil = await startAnvil({ noMining: true })
  service = await startTestService({
    chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId, pollingIntervalMs: 50 } },
    env: HIGH_LIMITS,
  })
  merchant = await service.newAccount('merchant')
  developer = await service.newAccount('developer')
  linkId = await createLink(service, merchant.accountId)
  await connectShop(service, merchant.accountId, 'merchant.myshopify.com')
  const app = (
    await service.admin({ method: 'POST', url: `/admin/accounts/${developer.accountId}/apps`, payload: { name: 'Reports' } })
  ).json().id
  const grant = await service.admin({
    method: 'POST',
    url: `/admin/apps/${app}/grants`,
    payload: { account_id: merchant.accountId, scopes: ['payments.read', 'checkouts.shopify.read'] },
  })
  accessToken = grant.json().access_token
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

const randomAddress = (): Address => `0x${randomBytes(20).toString('hex')}`

/** Sends a native transfer that stays in the mempool until the next `mine`. */
async function sendPending(from: AnvilAccount, to: Address, ether: string, nonce: number): Promise<Hash> {
  return from.wallet.sendTransaction({ to, value: parseEther(ether), nonce, gas: 21_000n })
}

/** Resolves with the completed trackings once every given secret_id left pending (or fails after a while). */
function completions(secretIds: string[], timeoutMs = 60_000): Promise<Map<string, Tracking>> {
  const waiting = new Set(secretIds)
  const done = new Map<string, Tracking>()
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      service.events.off('completed', onCompleted)
      reject(new Error(`the engine did not complete ${waiting.size} of ${secretIds.length} payments in ${timeoutMs} ms`))
    }, timeoutMs)
    function onCompleted(tracking: Tracking) {
      if (!waiting.delete(tracking.secretId)) return
      done.set(tracking.secretId, tracking)
      if (waiting.size === 0) {
        clearTimeout(timer)
        service.events.off('completed', onCompleted)
        resolve(done)
      }
    }
    service.events.on('completed', onCompleted)
  })
}

async function register(fields: Record<string, unknown>): Promise<string> {
  const secretId = `e2e-${randomBytes(8).toString('hex')}`
  const res = await service.api(merchant.apiKey, {
    method: 'POST',
    url: '/v2/payments',
    payload: {
      blockchain: 'ethereum',
      token: NATIVE,
      after_block: Number(await anvil.publicClient.getBlockNumber()),
      secret_id: secretId,
      callback: 'https://example.com/callback',
      ...fields,
    },
  })
  assert.equal(res.statusCode, 201, res.body)
  return secretId
}

test('link payments mined in one block: judged by the engine, paged without skip or repeat', async () => {
  const payer = anvil.accounts[1]!
  const first = await anvil.publicClient.getTransactionCount({ address: payer.address, blockTag: 'pending' })
  const secretIds: string[] = []
  for (let i = 0; i < 12; i++) {
    const receiver = randomAddress()
    const hash = await sendPending(payer, receiver, '0.01', first + i)
    secretIds.push(
      await register({
        link_id: linkId,
        sender: payer.address,
        nonce: first + i,
        receiver,
        amount: '0.01',
        transaction: hash,
        payload: { n: i },
      }),
    )
  }
  assert.deepEqual(
    (await service.api(merchant.apiKey, { method: 'GET', url: `/links/${linkId}/payments`, headers: VERSION })).json(),
    [],
    'nothing before the block',
  )

  const settled = completions(secretIds)
  await mine(anvil, 1)
  const done = await settled
  assert.ok(
    [...done.values()].every((t) => t.status === 'success'),
    'every payment succeeded',
  )

  const seen: any[] = []
  let after: string | undefined
  for (const expected of [10, 2, 0]) {
    const res = await service.api(merchant.apiKey, {
      method: 'GET',
      url: `/links/${linkId}/payments`,
      query: after ? { after } : {},
      headers: VERSION,
    })
    assert.equal(res.statusCode, 200, res.body)
    const page = res.json<any[]>()
    assert.equal(page.length, expected)
    seen.push(...page)
    after = page.at(-1)?.confirmed_at ?? after
  }
  assert.deepEqual(
    seen.map((r) => r.payload.n).sort((a, b) => a - b),
    Array.from({ length: 12 }, (_, i) => i),
    'each payment exactly once',
  )
  assert.equal(new Set(seen.map((r) => r.transaction)).size, 12)
  const earlier = (await service.api(merchant.apiKey, { method: 'GET', url: `/links/${linkId}/payments` })).json<any[]>()
  assert.equal(earlier[0].status, 'success')
  assert.equal(typeof earlier[0].payload, 'string')
})

test('Shopify payments judged by the engine: readable once succeeded, by the account and by a granted app; underpaid never', async () => {
  const payer = anvil.accounts[2]!
  const nonce = await anvil.publicClient.getTransactionCount({ address: payer.address, blockTag: 'pending' })
  const paidTo = randomAddress()
  const shortTo = randomAddress()
  const paid = await register({
    shop: 'merchant.myshopify.com',
    shopify_payment_id: 'gid://shopify/Payment/1',
    sender: payer.address,
    nonce,
    receiver: paidTo,
    amount: '0.2',
    transaction: await sendPending(payer, paidTo, '0.2', nonce),
  })
  const short = await register({
    shop: 'merchant.myshopify.com',
    shopify_payment_id: 'gid://shopify/Payment/2',
    sender: payer.address,
    nonce: nonce + 1,
    receiver: shortTo,
    amount: '0.2',
    transaction: await sendPending(payer, shortTo, '0.1', nonce + 1),
  })
  const id = encodeURIComponent('gid://shopify/Payment/1')
  assertProblem(await service.api(merchant.apiKey, { method: 'GET', url: `/v2/payments/shopify/${id}` }), 404, 'NOT_FOUND')

  const settled = completions([paid, short])
  await mine(anvil, 1)
  const done = await settled
  assert.equal(done.get(paid)!.status, 'success')
  assert.equal(done.get(short)!.status, 'failed')

  const full = await service.api(merchant.apiKey, { method: 'GET', url: `/v2/payments/shopify/${id}` })
  assert.equal(full.statusCode, 200, full.body)
  assert.equal(full.json().status, 'success')
  assert.equal(full.json().secret_id, paid)
  const summary = await service.api(merchant.apiKey, { method: 'GET', url: `/payments/shopify/${id}`, headers: VERSION })
  assert.equal(summary.json().amount, '0.2')
  assert.equal(summary.json().confirmed_at, full.json().confirmed_at)

  const viaApp = await service.api(developer.apiKey, {
    method: 'GET',
    url: `/apps/payments/shopify/${id}`,
    headers: { ...VERSION, authorization: `Bearer ${accessToken}` },
  })
  assert.equal(viaApp.statusCode, 200, viaApp.body)
  assert.equal(viaApp.json().transaction, full.json().transaction)
  const shops = await service.api(developer.apiKey, {
    method: 'GET',
    url: '/apps/checkouts/shopify',
    headers: { ...VERSION, authorization: `Bearer ${accessToken}` },
  })
  assert.deepEqual(shops.json(), [{ shop: 'merchant.myshopify.com' }])

  const underpaid = encodeURIComponent('gid://shopify/Payment/2')
  assertProblem(await service.api(merchant.apiKey, { method: 'GET', url: `/v2/payments/shopify/${underpaid}` }), 404, 'NOT_FOUND')
  assertProblem(
    await service.api(developer.apiKey, {
      method: 'GET',
      url: `/apps/payments/shopify/${underpaid}`,
      headers: { authorization: `Bearer ${accessToken}` },
    }),
    404,
    'NOT_FOUND',
  )
})
