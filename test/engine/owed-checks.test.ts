// A new tracking is owed a check against the chain (a payment mined before it was stored is found only so;
// src/engine/fast-path-checks.ts): the check is a row stored with the tracking (migration 0039), deleted once
// the check is done, and the chain's follower runs the rows no one runs. That covers a check that failed until
// the node that stored the tracking stopped, or that the node did not start before it stopped; a trace stored
// on a node that does not follow the chain (only the follower knows the blocks it passed); and a trace's search
// that read only part of its blocks in one turn (a native trace's, read one by one where no provider offers
// trace_filter). Before, the check was owed in memory by the storing node alone, and each of these trackings
// stayed pending though paid.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { parseEther } from 'viem'
import { mine, sendNative, type Anvil } from '../support/index.ts'
import { onPostgres } from '../support/database.ts'
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.ts'
import type { TestService } from '../support/service.ts'
import { useRestartableServices, useServicePair } from './lasting-services.ts'
import { createPayment, createTrace, engineAtHead, freshAddress, lower, NATIVE, readPayment, waitFor, waitForFinal } from './support.ts'

const NO_TRACE_FILTER = { code: -32601, message: 'the method trace_filter does not exist/is not available' }
const BUSY = { code: -32603, message: 'internal error: the node is busy' }

const owedChecks = async (service: TestService): Promise<number> => {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM owed_checks`.execute(service.database.db)
  return rows[0]!.n
}

describe('one service, restarted', () => {
  const lasting = useRestartableServices()
  let anvil: Anvil
  let proxy: RpcProxy
  before(async () => {
    anvil = lasting.anvil
    proxy = await startRpcProxy(anvil.rpcUrl)
  })
  after(async () => {
    await proxy?.close()
  })
  const start = (options: { background?: boolean } = {}) => lasting.start({ ...options, chain: { rpc: [proxy.url] } })
  const stop = (service: TestService) => lasting.stop(service)

  test('a search that failed until the service stopped is run by the service started next', async (t) => {
    t.after(() => proxy.setCallRefusal(null))
    const first = await start()
    const { apiKey } = await first.newAccount()
    const receiver = freshAddress()
    const afterBlock = await anvil.publicClient.getBlockNumber()
    const paid = await sendNative(anvil, anvil.accounts[1]!, receiver, parseEther('0.5'))
    await engineAtHead(first, anvil)

    // Every block asked by number is refused: the search of the trace's block fails, again and again.
    proxy.setCallRefusal((call) => (call.method === 'eth_getBlockByNumber' && String(call.params[0]).startsWith('0x') ? BUSY : null))
    proxy.reset()
    const secretId = await createTrace(first, apiKey, { token: NATIVE, receiver, amount: '0.5', afterBlock })
    await waitFor('the search to ask for the paying block', async () =>
      proxy.requests.some((r) => r.raw.includes(`"0x${paid.blockNumber.toString(16)}"`)) ? true : undefined,
    )
    assert.equal(await owedChecks(first), 1, 'the check is owed while it fails')
    await stop(first)
    proxy.setCallRefusal(null)

    const second = await start()
    const record = await waitForFinal(second, apiKey, secretId)
    assert.equal(record.status, 'success')
    assert.equal(lower(record.transaction as string), lower(paid.transactionHash))
    await waitFor('the owed check to be settled', async () => ((await owedChecks(second)) === 0 ? true : undefined))
    await stop(second)
  })

  test('a payment mined before its tracking, stored by a node that stopped before checking it: found after a restart', async () => {
    const first = await start()
    const { apiKey } = await first.newAccount()
    const sender = anvil.accounts[3]!
    const receiver = freshAddress()
    const afterBlock = await anvil.publicClient.getBlockNumber()
    const nonce = await anvil.publicClient.getTransactionCount({ address: sender.address })
    const paid = await sendNative(anvil, sender, receiver, parseEther('1'))
    // The follower passes the paying block while no tracking expects it; no later block consumes the nonce.
    await engineAtHead(first, anvil)
    await stop(first)

    // The API alone (no engine): the tracking is stored, and its check never starts.
    const api = await start({ background: false })
    const { request } = await createPayment(api, apiKey, anvil, sender, { receiver, amount: '1', nonce, after_block: afterBlock })
    assert.equal(await owedChecks(api), 1)
    // A minute later: the node that stored it would have checked it long ago.
    await sql`UPDATE owed_checks SET created_at = created_at - interval '1 minute'`.execute(api.database.db)
    await stop(api)

    const service = await start()
    const record = await waitForFinal(service, apiKey, request.secret_id)
    assert.equal(record.status, 'success', 'only the owed check finds it')
    assert.equal(lower(record.transaction as string), lower(paid.transactionHash))
    await waitFor('the owed check to be settled', async () => ((await owedChecks(service)) === 0 ? true : undefined))
    await stop(service)
  })

  test('a native trace 100 blocks late without trace_filter: its blocks are read 64 a turn until its payment', async (t) => {
    proxy.setCallRefusal((call) => (call.method === 'trace_filter' ? NO_TRACE_FILTER : null))
    t.after(() => proxy.setCallRefusal(null))
    const service = await start()
    const { apiKey } = await service.newAccount()
    const receiver = freshAddress()
    const afterBlock = await anvil.publicClient.getBlockNumber()
    await mine(anvil, 89)
    const paid = await sendNative(anvil, anvil.accounts[1]!, receiver, parseEther('0.5'))
    assert.equal(paid.blockNumber, afterBlock + 90n)
    await mine(anvil, 10)
    await engineAtHead(service, anvil)

    const secretId = await createTrace(service, apiKey, { token: NATIVE, receiver, amount: '0.5', afterBlock })
    const record = await waitForFinal(service, apiKey, secretId, 30_000)
    assert.equal(record.status, 'success', 'found in the second turn: the first read blocks 1 to 64')
    assert.equal(lower(record.transaction as string), lower(paid.transactionHash))
    await waitFor('the owed check to be settled', async () => ((await owedChecks(service)) === 0 ? true : undefined))
    await stop(service)
  })
})

describe('two services on one database', onPostgres, () => {
  const pair = useServicePair()

  test('a trace stored on the node that does not follow the chain is searched by the one that does', async () => {
    const { anvil } = pair
    const { leader, standby } = await pair.roles()
    const { apiKey } = await standby.newAccount()
    const receiver = freshAddress()
    const afterBlock = await anvil.publicClient.getBlockNumber()
    const paid = await sendNative(anvil, anvil.accounts[1]!, receiver, parseEther('0.5'))
    await engineAtHead(leader, anvil)

    const secretId = await createTrace(standby, apiKey, { token: NATIVE, receiver, amount: '0.5', afterBlock })
    assert.equal((await readPayment(standby, apiKey, secretId)).status, 'pending')
    // No block is mined from here: only the follower's search of the blocks it passed can find the payment.
    const record = await waitForFinal(standby, apiKey, secretId)
    assert.equal(record.status, 'success')
    assert.equal(lower(record.transaction as string), lower(paid.transactionHash))
  })
})
