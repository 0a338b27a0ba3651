// The chain runner's pauses after failed syncs, against Anvil behind a proxy that refuses chosen
// calls: a sync that processed blocks before failing keeps them (stored) and resets the backoff; a
// sync that made no progress waits longer each time; an RPC failure is one log line naming the
// provider (no stack); an answer that asking again cannot change is logged as an error.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pino from 'pino'
import { createChainReader } from '../../src/chain/chain-reader.ts'
import { chainLease } from '../../src/engine/leader-lock.ts'
import { createRpcClient } from '../../src/chain/rpc-client.ts'
import { builtInChains } from '../../src/config/chains.ts'
import { createChainRunner, type ChainRunner } from '../../src/engine/chain-runner.ts'
import { loadChainWindow } from '../../src/store/chain-blocks.ts'
import { createTestDatabase } from '../support/database.ts'
import { mine, startAnvil, type Anvil } from '../support/index.ts'
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.ts'
import { waitFor } from './support.ts'

let anvil: Anvil
let proxy: RpcProxy
let database: Awaited<ReturnType<typeof createTestDatabase>>
let runner: ChainRunner | undefined
const lines: { raw: string; entry: Record<string, unknown> }[] = []

before(async () => {
  anvil = await startAnvil({ noMining: true, slotsInAnEpoch: 1 })
  proxy = await startRpcProxy(anvil.rpcUrl)
  database = await createTestDatabase()
})
after(async () => {
  await runner?.stop()
  await database?.close()
  await proxy?.close()
  await anvil?.stop()
})

const failures = () => lines.filter((line) => String(line.entry.msg).startsWith('chain sync failed'))
const blockNumberOf = (params: unknown[]) =>
  params[1] === true && typeof params[0] === 'string' && params[0].startsWith('0x') ? BigInt(params[0]) : undefined

test('a sync that advanced resets the backoff and keeps its blocks; one without progress backs off', async () => {
  const chain = {
    ...builtInChains().ethereum!,
    name: 'sync-backoff',
    chainId: anvil.chainId,
    rpc: [proxy.url],
    pollingIntervalMs: 20,
    rpcTimeoutMs: 2_000,
  }
  // No retries inside a request: each refused call fails its sync, so the runner's own pauses show.
  const reader = createChainReader(createRpcClient(chain, { retryRounds: 0 }))
  const logger = pino(
    { level: 'info' },
    { write: (raw: string) => void lines.push({ raw, entry: JSON.parse(raw) as Record<string, unknown> }) },
  )
  await mine(anvil, 2)
  runner = createChainRunner({
    chain,
    db: database.db,
    reader,
    lock: chainLease({ db: database.db, chain: chain.name, holder: 'sync-backoff-test', exclusive: true }),
    logger,
    sink: async () => {},
    random: () => 0.5,
    verifyIdentity: async () => (await reader.chainId()) === chain.chainId,
  })
  runner.start()
  const processed = () => runner!.follower?.state.head?.number
  const start = await anvil.publicClient.getBlockNumber()
  await waitFor('the follower at the head', async () => (processed() === start ? true : undefined))

  // Every fifth block fails once (farther apart than the follower reads ahead): each failed sync
  // processed blocks before failing.
  const refusedOnce = new Set<bigint>()
  proxy.setCallRefusal(({ method, params }) => {
    const number = method === 'eth_getBlockByNumber' ? blockNumberOf(params) : undefined
    if (number === undefined || number % 5n !== 0n || refusedOnce.has(number)) return null
    refusedOnce.add(number)
    return { code: -32603, message: 'internal error (test)' }
  })
  await mine(anvil, 20)
  await waitFor('the follower through the flaky blocks', async () => (processed() === start + 20n ? true : undefined), 20_000)
  const flaky = failures()
  assert.ok(flaky.length >= 3, `syncs failed (${flaky.length})`)
  assert.deepEqual(
    flaky.map((line) => line.entry.retryInMs),
    flaky.map(() => 0),
    'a sync that advanced retries at once',
  )
  const blocks = flaky.map((line) => BigInt(String(line.entry.block)))
  assert.ok(
    blocks.every((block, i) => i === 0 || block > blocks[i - 1]!),
    `each failure came after progress (${blocks.join(', ')})`,
  )
  for (const { raw, entry } of flaky) {
    assert.equal(entry.level, 40, 'a warning')
    assert.equal(entry.chain, 'sync-backoff')
    assert.equal(entry.provider, new URL(proxy.url).host)
    assert.match(String(entry.error), /internal error \(test\)/)
    assert.ok(!('err' in entry) && !raw.includes('    at '), `no stack trace: ${raw}`)
  }

  // One block keeps failing: no progress, so each pause is longer than the previous one.
  lines.length = 0
  const stuck = start + 22n
  proxy.setCallRefusal(({ method, params }) =>
    method === 'eth_getBlockByNumber' && blockNumberOf(params) === stuck ? { code: -32603, message: 'internal error (test)' } : null,
  )
  await mine(anvil, 3)
  await waitFor('four failed syncs', async () => (failures().length >= 4 ? true : undefined), 20_000)
  assert.deepEqual(
    failures()
      .slice(0, 4)
      .map((line) => line.entry.retryInMs),
    [0, 250, 500, 1_000],
  )
  const stored = await loadChainWindow(database.db, chain.name)
  assert.equal(stored.at(-1)!.number, stuck - 1n, 'the blocks before the failing one are stored')

  // An answer no retry will change (invalid params): an error line, once per attempt, never silent.
  lines.length = 0
  proxy.setCallRefusal(({ method, params }) =>
    method === 'eth_getBlockByNumber' && blockNumberOf(params) === stuck ? { code: -32602, message: 'invalid params (test)' } : null,
  )
  await waitFor('a failed sync', async () => (failures().length >= 1 ? true : undefined), 20_000)
  const [invalid] = failures()
  assert.equal(invalid!.entry.level, 50, 'an error')
  assert.match(String(invalid!.entry.error), /invalid params \(test\)/)
  assert.equal(invalid!.entry.provider, new URL(proxy.url).host)
  assert.ok(!('err' in invalid!.entry), 'no stack trace')

  proxy.setCallRefusal(null)
  await waitFor('the follower at the head again', async () => (processed() === start + 23n ? true : undefined), 20_000)
  assert.equal(runner.follower!.state.lastError, undefined)
})
