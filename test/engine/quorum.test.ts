// Quorum 2 of 3: one provider lies about a transaction (the fastest one, so that its answer is the
// one judged first). A fabricated payment is never a success and a hidden real payment is never a
// failure: the other two providers' agreed evidence decides, the liar is counted in
// paywatch_rpc_disagreements_total and sits out.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { parseEther, type Address } from 'viem'
import { mine, sendNative, startAnvil, type Anvil, type AnvilAccount } from '../support/index.ts'
import { startFaultyRpcProxy, type AnswerRewrite, type FaultyRpcProxy } from '../support/faulty-rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, engineAtHead, freshAddress, readPayment, startEngineService, waitFor } from './support.ts'

const cleanup: (() => Promise<void>)[] = []
after(async () => {
  for (const step of cleanup.reverse()) await step()
})

/** Three providers over one node; the first answers at once, the other two a little later. */
async function setUp(): Promise<{ anvil: Anvil; proxies: FaultyRpcProxy[]; service: TestService; apiKey: string }> {
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

/**
 * The liar's rewrite, counting the answers it changed for a lookup of a block, transaction or receipt
 * (not a probe of the latest block). The quorum asks as many providers at once as it still needs, best
 * first: when two honest providers answered first, the liar was never asked and has nothing to be
 * counted for; when its lie was served, it must be.
 */
function counted(rewrite: AnswerRewrite): { rewrite: AnswerRewrite; lies: () => number } {
  let lies = 0
  return {
    rewrite: (call, result) => {
      const before = JSON.stringify(result)
      const after = rewrite(call, result)
      const probe = ['latest', 'pending', 'safe', 'finalized'].includes(String((call.params as unknown[] | undefined)?.[0]))
      if (!probe && JSON.stringify(after) !== before) lies++
      return after
    },
    lies: () => lies,
  }
}

/** The liar is counted whenever one of its lies reached the engine. */
async function assertLiarCounted(service: TestService, liar: FaultyRpcProxy, lies: () => number): Promise<void> {
  if (lies() > 0) assert.ok((await disagreements(service, liar)) >= 1, 'the liar is counted')
}

async function pay(anvil: Anvil, from: AnvilAccount, to: Address) {
  return sendNative(anvil, from, to, parseEther('1'))
}

test('a receipt fabricated by one provider does not make a success', async () => {
  const { anvil, proxies, service, apiKey } = await setUp()
  const [liar, honestA, honestB] = proxies as [FaultyRpcProxy, FaultyRpcProxy, FaultyRpcProxy]
  const alice = anvil.accounts[1]!
  const receiver = freshAddress()
  const nonce = await anvil.publicClient.getTransactionCount({ address: alice.address })
  const lie = counted(redirect(alice.address, nonce, receiver))
  liar.setRewrite(lie.rewrite)
  const { request } = await createPayment(service, apiKey, anvil, alice, { receiver, amount: '1' })
  // The payment goes elsewhere; the liar says it reached the receiver.
  await pay(anvil, alice, freshAddress())
  const record = await mineUntilFinal(anvil, service, apiKey, request.secret_id)
  assert.deepEqual([record.status, record.failed_reason], ['failed', 'RECEIVER_MISMATCH'])
  await assertLiarCounted(service, liar, lie.lies)
  assert.equal(await disagreements(service, honestA), 0)
  assert.equal(await disagreements(service, honestB), 0)
  const ready = (await service.app.inject({ method: 'GET', url: '/readyz' })).json()
  assert.equal(ready.chains[0].providers[0].state, 'sitting-out')
})

test('a real payment hidden by one provider does not make a failure', async () => {
  const { anvil, proxies, service, apiKey } = await setUp()
  const [liar, honestA, honestB] = proxies as [FaultyRpcProxy, FaultyRpcProxy, FaultyRpcProxy]
  const bob = anvil.accounts[2]!
  const receiver = freshAddress()
  const nonce = await anvil.publicClient.getTransactionCount({ address: bob.address })
  const lie = counted(redirect(bob.address, nonce, freshAddress()))
  liar.setRewrite(lie.rewrite)
  const { request } = await createPayment(service, apiKey, anvil, bob, { receiver, amount: '1' })
  const paid = await pay(anvil, bob, receiver)
  const record = await mineUntilFinal(anvil, service, apiKey, request.secret_id)
  assert.equal(record.status, 'success')
  assert.equal(record.transaction, paid.transactionHash.toLowerCase())
  await assertLiarCounted(service, liar, lie.lies)
  assert.equal(await disagreements(service, honestA), 0)
  assert.equal(await disagreements(service, honestB), 0)
})

test('a receipt that one provider turns into a revert does not make a failure', async () => {
  // The transaction's fields check out locally, so the other providers are asked only for its
  // receipt: the lie is then in the receipt alone, and the receipts of the others decide.
  const { anvil, proxies, service, apiKey } = await setUp()
  const [liar, honestA, honestB] = proxies as [FaultyRpcProxy, FaultyRpcProxy, FaultyRpcProxy]
  const carol = anvil.accounts[3]!
  const receiver = freshAddress()
  const revert = (receipt: unknown) => {
    const r = receipt as { from?: string; status?: string } | null
    if (r && typeof r === 'object' && r.from?.toLowerCase() === carol.address.toLowerCase() && r.status) r.status = '0x0'
  }
  const lie = counted((call, result) => {
    if (call.method === 'eth_getTransactionReceipt') revert(result)
    if (call.method === 'eth_getBlockReceipts') for (const receipt of (result as unknown[] | null) ?? []) revert(receipt)
    return result
  })
  liar.setRewrite(lie.rewrite)
  const { request } = await createPayment(service, apiKey, anvil, carol, { receiver, amount: '1' })
  const paid = await pay(anvil, carol, receiver)
  const record = await mineUntilFinal(anvil, service, apiKey, request.secret_id)
  assert.equal(record.status, 'success')
  assert.equal(record.transaction, paid.transactionHash.toLowerCase())
  await assertLiarCounted(service, liar, lie.lies)
  assert.equal(await disagreements(service, honestA), 0)
  assert.equal(await disagreements(service, honestB), 0)
})

test("a provider that names the expected sender for another sender's payment does not make a success", async () => {
  // The sender is not among a transaction's hashed fields: the fields check out locally, and the
  // receipts of the other providers name the real sender.
  const { anvil, proxies, service, apiKey } = await setUp()
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
  const receiver = freshAddress()
  const { request } = await createPayment(service, apiKey, anvil, erin, { receiver, amount: '1' })
  await pay(anvil, dave, receiver)
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

test('a payment to a nonce-less trace fabricated by one provider is not its payment; the real one later is', async () => {
  const { anvil, proxies, service, apiKey } = await setUp()
  const [liar, honestA, honestB] = proxies as [FaultyRpcProxy, FaultyRpcProxy, FaultyRpcProxy]
  const alice = anvil.accounts[1]!
  const bob = anvil.accounts[2]!
  const receiver = freshAddress()
  const nonce = await anvil.publicClient.getTransactionCount({ address: alice.address })
  liar.setRewrite(redirect(alice.address, nonce, receiver))
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
  await waitFor('the liar to be counted', async () => ((await disagreements(service, liar)) >= 1 ? true : undefined))
  assert.equal((await readPayment(service, apiKey, secretId)).status, 'pending', 'a fabricated payment is no success')
  assert.equal(await disagreements(service, honestA), 0)
  assert.equal(await disagreements(service, honestB), 0)
  // The real payment, from anyone: the trace searched again and finds it.
  liar.setRewrite(null)
  const paid = await pay(anvil, bob, receiver)
  const record = await mineUntilFinal(anvil, service, apiKey, secretId)
  assert.equal(record.status, 'success')
  assert.equal(record.transaction, paid.transactionHash.toLowerCase())
  assert.equal(String(record.sender).toLowerCase(), bob.address.toLowerCase())
})

test("ten payments in one block: the quorum asks a provider for the block's receipts once, not for each payment's", async () => {
  const { anvil, proxies, service, apiKey } = await setUp()
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
