// Restart mid-way: the service stops with a payment short of confirmations and another not mined
// yet; blocks are mined while it is down; the restarted service resumes right after the last block
// it processed (none skipped, none processed twice) and judges both.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseEther } from 'viem'
import { createChainEngine, type ChainEngine } from '../../src/engine/chain-engine.ts'
import { mine, sendNative, startAnvil, type Anvil } from '../support/index.ts'
import { createFreshDatabaseUrl, dropDatabase } from '../support/database.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, engineAtHead, freshAddress, lower, readPayment, startEngineService, waitFor, waitForFinal } from './support.ts'

let anvil: Anvil
let databaseUrl: string | null
const running: TestService[] = []

before(async () => {
  anvil = await startAnvil()
  databaseUrl = await createFreshDatabaseUrl()
})
after(async () => {
  for (const service of running) await service.close()
  if (databaseUrl) await dropDatabase(databaseUrl)
  await anvil?.stop()
})

/** The service, on the same PostgreSQL database every time when DATABASE_URL is set. */
async function start(): Promise<TestService> {
  const service = await startEngineService(anvil, { env: databaseUrl ? { DATABASE_URL: databaseUrl } : {} })
  running.push(service)
  return service
}

/**
 * Stops `service`; `resume` starts over on the same database. On PostgreSQL the whole service
 * restarts; on the embedded database (whose on-disk creation alone takes seconds) the engine
 * restarts inside the running service: a new engine with nothing in memory, only what the database kept.
 */
async function stop(service: TestService): Promise<{ resume: () => Promise<{ service: TestService; engine: ChainEngine }> }> {
  if (databaseUrl) {
    await service.close()
    running.splice(running.indexOf(service), 1)
    return {
      async resume() {
        const next = await start()
        return { service: next, engine: next.engine }
      },
    }
  }
  await service.engine.stop()
  return {
    async resume() {
      const engine = createChainEngine(service.common, {
        database: service.database, chains: service.chains, events: service.events, fallbackReadiness: async () => [],
      })
      service.common.shutdown.add('restarted engine', () => engine.stop())
      await engine.start()
      return { service, engine }
    },
  }
}

const processedBlocks = async (service: TestService): Promise<number> => {
  const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  return Number(/paywatch_chain_blocks_processed_total\{chain="ethereum"\} (\d+)/.exec(text)?.[1] ?? 0)
}

test('a restarted service resumes after the last processed block', async () => {
  const first = await start()
  const { apiKey } = await first.newAccount()
  const alice = anvil.accounts[1]!
  const bob = anvil.accounts[2]!
  const receiver = freshAddress()

  const confirming = await createPayment(first, apiKey, anvil, alice, { receiver, amount: '1', confirmations: 3 })
  const later = await createPayment(first, apiKey, anvil, bob, { receiver, amount: '2' })
  const paid = await sendNative(anvil, alice, receiver, parseEther('1'))
  await engineAtHead(first, anvil)
  assert.equal((await readPayment(first, apiKey, confirming.request.secret_id)).status, 'pending')
  const stoppedAt = first.engine.runner('ethereum')!.follower!.state.head!.number
  const processedBefore = await processedBlocks(first)
  const stopped = await stop(first)

  // While nobody follows the chain: the second payment is mined, and enough blocks for the first.
  const paidLater = await sendNative(anvil, bob, receiver, parseEther('2'))
  await mine(anvil, 3)
  const head = await anvil.publicClient.getBlockNumber()

  const { service: second, engine } = await stopped.resume()
  const confirmed = await waitForFinal(second, apiKey, confirming.request.secret_id)
  assert.equal(confirmed.status, 'success')
  assert.equal(confirmed.transaction, lower(paid.transactionHash))
  const found = await waitForFinal(second, apiKey, later.request.secret_id)
  assert.equal(found.status, 'success')
  assert.equal(found.transaction, lower(paidLater.transactionHash))

  await waitFor('the engine to reach the head', async () => (engine.runner('ethereum')?.follower?.state.head?.number === head ? true : undefined))
  const processed = (await processedBlocks(second)) - (second === first ? processedBefore : 0)
  assert.equal(processed, Number(head - stoppedAt), 'exactly the blocks after the last processed one')
})
