// Quorum 2 of 3: one provider lies about a transaction, and the honest two lag behind it (they do not
// have the transaction yet), so that its answer is the one judged first. A fabricated payment is never a
// success and a hidden real payment is never a failure: once the honest two have it, their agreed
// evidence decides, and the liar is counted in paywatch_rpc_disagreements_total and sits out.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { parseEther, type Address } from 'viem'
import { mine, sendNative, startAnvil, type Anvil, type AnvilAccount } from '../support/index.ts'
import { startFaultyRpcProxy, type AnswerRewrite, type FaultyRpcProxy } from '../support/faulty-rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, engineAtHead, freshAddress, readPayment, startEngineService, waitFor } from './support.ts'

/**
 * Three providers over one node; the first answers at once, the other two a little later. All of it
 * stops when the test ends, not when the file does (six services at once held dozens of PostgreSQL
 * connections).
 */
async function setUp(t: TestContext): Promise<{ anvil: Anvil; proxies: FaultyRpcProxy[]; service: TestService; apiKey: string }> {
  const cleanup: (() => Promise<void>)[] = []
  t.after(async () => {
    for (const step of cleanup.reverse()) await step()
  })
  const anvil = await startAnvil()
  cleanup.push(() => anvil.stop())
  const proxies = await Promise.all([1, 2, 3].map((seed) => startFaultyRpcProxy(anvil.rpcUrl, { seed })))
  for (const proxy of proxies) cleanup.push(() => proxy.close())
  proxies[1]!.setDelay(15)
  proxies[2]!.setDelay(15)
  const service = await startEngineService(anvil, { chain: { rpc: proxies.map((p) => p.url), quorum: 2 } })
  cleanup.push(() => service.close())
  // A follower starts at the head: a payment mined before it follows would be left to the fast path,
  // which may have looked before it was mined.
  await engineAtHead(service, anvil)
  const { apiKey } = await service.newAccount()
  return { anvil, proxies, service, apiKey }
}

/** Rewrites the transaction of (`from`, `nonce`) wherever it appears as if it had been sent to `to`. */
function redirect(from: Address, nonce: number, to: Address): AnswerRewrite {
  const fix = (tx: unknown) => {
    const t = tx as { from?: string; nonce?: string; to?: string } | null
    if (t && typeof t === 'object' && t.from?.toLowerCase() === from.toLowerCase() && Number(t.nonce) === nonce) t.to = to.toLowerCase()
  }
  return (_call, result) => {
    fix(result)
    for (const tx of (result as { transactions?: unknown[] } | null)?.transactions ?? []) fix(tx)
    return result
  }
}

/**
 * The honest providers lag behind the liar: until `reveal()`, they answer null (not there yet) for a block
 * that holds the transaction of (`from`, `nonce`) and for `from`'s receipts. The engine then reads both
 * from the liar, whatever their ranking (a loaded machine may rank the liar after them, or hedge its
 * reads); once revealed, the honest providers' receipts are the quorum's votes.
 */
function honestLag(honest: FaultyRpcProxy[], from: Address, nonce: number): { reveal(): void } {
  const sender = from.toLowerCase()
  const fromSender = (value: unknown) => (value as { from?: string } | null)?.from?.toLowerCase() === sender
  const hidden = (result: unknown) =>
    fromSender(result) ||
    (Array.isArray(result) && result.some(fromSender)) ||
    ((result as { transactions?: unknown[] } | null)?.transactions ?? []).some(
      (tx) => fromSender(tx) && Number((tx as { nonce?: string }).nonce) === nonce,
    )
  for (const proxy of honest) proxy.setRewrite((_call, result) => (hidden(result) ? null : result))
  return { reveal: () => honest.forEach((proxy) => proxy.setRewrite(null)) }
}

/** Mines a block at a time until the payment is final (each block re-judges the stored match). */
async function mineUntilFinal(anvil: Anvil, service: TestService, apiKey: string, secretId: string) {
  const deadline = Date.now() + 15_000
  for (;;) {
    const record = await readPayment(service, apiKey, secretId)
    if (record.status !== 'pending') return record
    assert.ok(Date.now() < deadline, 'timed out waiting for the verdict')
    await mine(anvil, 1)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const disagreements = async (service: TestService, proxy: FaultyRpcProxy): Promise<number> => {
  const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  const label = proxy.url.replace(/[.:/]/g, '\\$&')
  return Number(new RegExp(`paywatch_rpc_disagreements_total\\{chain="ethereum",provider="${label}"\\} (\\d+)`).exec(text)?.[1] ?? 0)
}

/** Mines until the engine has read the blocks so far (the liar's, while the honest providers lag), then reveals. */
async function revealAfterEngineRead(anvil: Anvil, service: TestService, lag: { reveal(): void }): Promise<void> {
  await mine(anvil, 2)
  await engineAtHead(service, anvil)
  lag.reveal()
}

async function pay(anvil: Anvil, from: AnvilAccount, to: Address) {
  return sendNative(anvil, from, to, parseEther('1'))
}

test('a receipt fabricated by one provider does not make a success', async (t) => {
  const { anvil, proxies, service, apiKey } = await setUp(t)
  const [liar, honestA, honestB] = proxies as [FaultyRpcProxy, FaultyRpcProxy, FaultyRpcProxy]
  const alice = anvil.accounts[1]!
  const receiver = freshAddress()
  const nonce = await anvil.publicClient.getTransactionCount({ address: alice.address })
  liar.setRewrite(redirect(alice.address, nonce, receiver))
  const lag = honestLag([honestA, honestB], alice.address, nonce)
  const { request } = await createPayment(service, apiKey, anvil, alice, { receiver, amount: '1' })
  // The payment goes elsewhere; the liar says it reached the receiver.
  await pay(anvil, alice, freshAddress())
  await revealAfterEngineRead(anvil, service, lag)
  const record = await mineUntilFinal(anvil, service, apiKey, request.secret_id)
  assert.deepEqual([record.status, record.failed_reason], ['failed', 'RECEIVER_MISMATCH'])
  assert.ok((await disagreements(service, liar)) >= 1, 'the liar is counted')
  assert.equal(await disagreements(service, honestA), 0)
  assert.equal(await disagreements(service, honestB), 0)
  const ready = (await service.app.inject({ method: 'GET', url: '/readyz' })).json()
  assert.equal(ready.chains[0].providers[0].state, 'sitting-out')
})

test('a real payment hidden by one provider does not make a failure', async (t) => {
  const { anvil, proxies, service, apiKey } = await setUp(t)
  const [liar, honestA, honestB] = proxies as [FaultyRpcProxy, FaultyRpcProxy, FaultyRpcProxy]
  const bob = anvil.accounts[2]!
  const receiver = freshAddress()
  const nonce = await anvil.publicClient.getTransactionCount({ address: bob.address })
  liar.setRewrite(redirect(bob.address, nonce, freshAddress()))
  const lag = honestLag([honestA, honestB], bob.address, nonce)
  const { request } = await createPayment(service, apiKey, anvil, bob, { receiver, amount: '1' })
  const paid = await pay(anvil, bob, receiver)
  await revealAfterEngineRead(anvil, service, lag)
  const record = await mineUntilFinal(anvil, service, apiKey, request.secret_id)
  assert.equal(record.status, 'success')
  assert.equal(record.transaction, paid.transactionHash.toLowerCase())
  assert.ok((await disagreements(service, liar)) >= 1, 'the liar is counted')
  assert.equal(await disagreements(service, honestA), 0)
  assert.equal(await disagreements(service, honestB), 0)
})

test('a receipt that one provider turns into a revert does not make a failure', async (t) => {
  // The transaction's fields check out locally, so the other providers are asked only for its
  // receipt: the lie is then in the receipt alone, and the receipts of the others decide.
  const { anvil, proxies, service, apiKey } = await setUp(t)
  const [liar, honestA, honestB] = proxies as [FaultyRpcProxy, FaultyRpcProxy, FaultyRpcProxy]
  const carol = anvil.accounts[3]!
  const receiver = freshAddress()
  const revert = (receipt: unknown) => {
    const r = receipt as { from?: string; status?: string } | null
    if (r && typeof r === 'object' && r.from?.toLowerCase() === carol.address.toLowerCase() && r.status) r.status = '0x0'
  }
  liar.setRewrite((call, result) => {
    if (call.method === 'eth_getTransactionReceipt') revert(result)
    if (call.method === 'eth_getBlockReceipts') for (const receipt of (result as unknown[] | null) ?? []) revert(receipt)
    return result
  })
  const nonce = await anvil.publicClient.getTransactionCount({ address: carol.address })
  const lag = honestLag([honestA, honestB], carol.address, nonce)
  const { request } = await createPayment(service, apiKey, anvil, carol, { receiver, amount: '1' })
  const paid = await pay(anvil, carol, receiver)
  await revealAfterEngineRead(anvil, service, lag)
  const record = await mineUntilFinal(anvil, service, apiKey, request.secret_id)
  assert.equal(record.status, 'success')
  assert.equal(record.transaction, paid.transactionHash.toLowerCase())
  assert.ok((await disagreements(service, liar)) >= 1, 'the liar is counted')
  assert.equal(await disagreements(service, honestA), 0)
  assert.equal(await disagreements(service, honestB), 0)
})

test("a provider that names the expected sender for another sender's payment does not make a success", async (t) => {
  // The sender is not among a transaction's hashed fields: the fields check out locally, and the
  // receipts of the other providers name the real sender.
  const { anvil, proxies, service, apiKey } = await setUp(t)
  const [liar, honestA, honestB] = proxies as [FaultyRpcProxy, FaultyRpcProxy, FaultyRpcProxy]
  const erin = anvil.accounts[4]!
  const dave = anvil.accounts[5]!
  const nonce = await anvil.publicClient.getTransactionCount({ address: erin.address })
  await anvil.testClient.setNonce({ address: dave.address, nonce })
  const asErin = (value: unknown) => {
    const t = value as { from?: string } | null
    if (t && typeof t === 'object' && t.from?.toLowerCase() === dave.address.toLowerCase()) t.from = erin.address.toLowerCase()
  }
  liar.setRewrite((_call, result) => {
    asErin(result)
    for (const item of Array.isArray(result) ? result : ((result as { transactions?: unknown[] } | null)?.transactions ?? [])) asErin(item)
    return result
  })
  const lag = honestLag([honestA, honestB], dave.address, nonce)
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, erin, { receiver, amount: '1' })
  await pay(anvil, dave, receiver)
  // The verdict rests on the liar's block and receipt; the honest receipts, once there, contradict it.
  await revealAfterEngineRead(anvil, service, lag)
  const deadline = Date.now() + 15_000
  while ((await disagreements(service, liar)) === 0) {
    assert.ok(Date.now() < deadline, 'the liar was never caught')
    await mine(anvil, 1)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await mine(anvil, 3)
  await new Promise((resolve) => setTimeout(resolve, 300))
  const record = await readPayment(service, apiKey, request.secret_id)
  assert.equal(record.status, 'pending', "erin's nonce is not consumed")
  assert.equal(await disagreements(service, honestA), 0)
  assert.equal(await disagreements(service, honestB), 0)
})

test('a payment to a nonce-less trace fabricated by one provider is not its payment; the real one later is', async (t) => {
  const { anvil, proxies, service, apiKey } = await setUp(t)
  const [liar, honestA, honestB] = proxies as [FaultyRpcProxy, FaultyRpcProxy, FaultyRpcProxy]
  const alice = anvil.accounts[1]!
  const bob = anvil.accounts[2]!
  const receiver = freshAddress()
  const nonce = await anvil.publicClient.getTransactionCount({ address: alice.address })
  liar.setRewrite(redirect(alice.address, nonce, receiver))
  const lag = honestLag([honestA, honestB], alice.address, nonce)
  const secretId = `quorum-trace-${process.pid}`
  const created = await service.api(apiKey, {
    method: 'POST',
    url: '/v2/payments',
    payload: {
      blockchain: 'ethereum',
      token: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
      receiver,
      amount: '1',
      after_block: String(await anvil.publicClient.getBlockNumber()),
      secret_id: secretId,
      callback: 'https://merchant.example/callback',
    },
  })
  assert.equal(created.statusCode, 201, created.body)
  // Alice pays someone else; the liar says it reached the receiver.
  await pay(anvil, alice, freshAddress())
  await mine(anvil, 2)
  await engineAtHead(service, anvil)
  // The liar's block alone gives it away: its transaction does not hash to its hash. The honest ones do
  // not have Alice's transaction yet: no quorum can drop the fabricated payment, and the trace holds it.
  await waitFor('the liar to be counted', async () => ((await disagreements(service, liar)) >= 1 ? true : undefined))
  assert.equal(await disagreements(service, honestA), 0)
  assert.equal(await disagreements(service, honestB), 0)
  // Meanwhile the real payment, from anyone. Once the honest providers show Alice's transaction, a
  // quorum drops the fabricated one, and the trace searches the blocks passed since: it finds Bob's.
  liar.setRewrite(null)
  const paid = await pay(anvil, bob, receiver)
  await mine(anvil, 1)
  await engineAtHead(service, anvil)
  assert.equal((await readPayment(service, apiKey, secretId)).status, 'pending', 'a fabricated payment is no success')
  lag.reveal()
  const record = await mineUntilFinal(anvil, service, apiKey, secretId)
  assert.equal(record.status, 'success')
  assert.equal(record.transaction, paid.transactionHash.toLowerCase())
  assert.equal(String(record.sender).toLowerCase(), bob.address.toLowerCase())
})

test("ten payments in one block: the quorum asks a provider for the block's receipts once, not for each payment's", async (t) => {
  const { anvil, proxies, service, apiKey } = await setUp(t)
  const singles: string[] = []
  let counted = 0
  /** Per block hash: which providers were asked for its receipts, once per request. */
  const blockReads = new Map<string, number[]>()
  proxies.forEach((proxy, i) =>
    proxy.setRewrite((call, result) => {
      if (call.method === 'eth_getTransactionReceipt') singles.push(String(call.params[0]))
      if (call.method === 'eth_getTransactionCount') counted++
      if (call.method === 'eth_getBlockReceipts') {
        const block = String(call.params[0]).toLowerCase()
        blockReads.set(block, [...(blockReads.get(block) ?? []), i])
      }
      return result
    }),
  )
  // Ten payers, one payment each: the fast path counts each sender's nonce once.
  const payers = anvil.accounts.slice(0, 10)
  const receiver = freshAddress()
  const secrets: string[] = []
  for (const payer of payers)
    secrets.push((await createPayment(service, apiKey, anvil, payer, { receiver, amount: '1' })).request.secret_id)
  // Every new tracking's nonce counted (unused: nothing for the fast path to read one by one once they are paid).
  await waitFor('the new trackings sieved', async () => (counted >= payers.length ? true : undefined))
  await anvil.testClient.setAutomine(false)
  for (const payer of payers) await payer.wallet.sendTransaction({ to: receiver, value: parseEther('1') })
  await mine(anvil, 1)
  await anvil.testClient.setAutomine(true)
  const paying = (await anvil.publicClient.getBlock()).hash.toLowerCase()
  for (const secret of secrets) assert.equal((await mineUntilFinal(anvil, service, apiKey, secret)).status, 'success')
  assert.deepEqual(singles, [], 'no receipt asked for one by one')
  // The follower's read of the block's receipts (its evidence is that provider's vote), and the quorum's
  // of the one provider it asks besides: two requests, each of another provider.
  const asked = blockReads.get(paying) ?? []
  assert.equal(asked.length, 2, `two reads of the paying block's receipts (providers ${asked})`)
  assert.equal(new Set(asked).size, 2, 'each of another provider')
})
