// How often the follower asks the RPC for its `finalized` tag (src/engine/finality-cadence.ts): at the first
// head, then every FINALITY_READ_EVERY heads, and at every head while a payment's verdict waits for
// finality. Against Anvil (one slot per epoch: finalized = head − 2) behind a counting proxy.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pino from 'pino'
import { createPublicClient, http } from 'viem'
import { createBlockFollower, type FollowerEvent } from '../../src/engine/block-follower.ts'
import { FINALITY_READ_EVERY } from '../../src/engine/finality-cadence.ts'
import { createChainReader } from '../../src/chain/chain-reader.ts'
import { builtInChains } from '../../src/config/chains.ts'
import { useTestDatabase } from '../support/database.ts'
import { mine, startAnvil, type Anvil } from '../support/index.ts'
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.ts'

let anvil: Anvil
let proxy: RpcProxy
const database = useTestDatabase()

before(async () => {
  anvil = await startAnvil({ slotsInAnEpoch: 1 })
  proxy = await startRpcProxy(anvil.rpcUrl)
})
after(async () => {
  await proxy?.close()
  await anvil?.stop()
})

const tagReads = () =>
  proxy.requests.filter((request) => {
    const call = request.body as { method?: string; params?: unknown[] }
    return call.method === 'eth_getBlockByNumber' && call.params?.[0] === 'finalized'
  }).length

/** Mines one block and syncs to it, `heads` times; returns each block's finalized number and the finalize events. */
async function follow(name: string, heads: number, awaited: (blocksFollowed: number) => boolean) {
  const blocks: bigint[] = []
  const finalizes: bigint[] = []
  const follower = createBlockFollower({
    chain: { ...builtInChains().ethereum!, name, chainId: 31337, rpc: [proxy.url] },
    reader: createChainReader(createPublicClient({ transport: http(proxy.url) })),
    db: database.db,
    logger: pino({ level: 'silent' }),
    finality: { awaited: () => awaited(blocks.length) },
    sink: async (event: FollowerEvent) => {
      if (event.type === 'block') blocks.push(event.finalized)
      if (event.type === 'finalize') finalizes.push(event.finalized)
    },
  })
  await mine(anvil, 1)
  await follower.sync()
  proxy.reset()
  blocks.length = 0
  finalizes.length = 0
  for (let i = 0; i < heads; i++) {
    await mine(anvil, 1)
    await follower.sync()
  }
  return { blocks, finalizes }
}

test(`no payment waits for finality: the tag is read once every ${FINALITY_READ_EVERY} heads, and blocks between carry the last read`, async () => {
  const heads = 2 * FINALITY_READ_EVERY
  const { blocks, finalizes } = await follow('cadence-quiet', heads, () => false)
  assert.equal(tagReads(), 2, `${heads} heads after the first read: two reads`)
  // Between two reads every block carries the finalized number of the last one, which only moves at a read.
  const distinct = [...new Set(blocks)]
  assert.equal(distinct.length, 3, `three values: the first read's, then one per read (${blocks.join(', ')})`)
  assert.ok(
    blocks.every((value, i) => i === 0 || value >= blocks[i - 1]!),
    'never moves back',
  )
  assert.equal(finalizes.length, 2, 'a finalize event per read (each moved it)')
})

test('a payment waits for finality: the tag is read at every head, and every block carries the newest', async () => {
  const heads = FINALITY_READ_EVERY + 2
  const { blocks } = await follow('cadence-awaited', heads, () => true)
  assert.equal(tagReads(), heads, 'one read per head')
  // Anvil with one slot per epoch: finalized = head − 2, so consecutive heads carry consecutive numbers.
  assert.ok(
    blocks.every((value, i) => i === 0 || value === blocks[i - 1]! + 1n),
    `each block one further than the last (${blocks.join(', ')})`,
  )
})

test('the flag is read at each head: once it clears, reads fall back to the cadence', async () => {
  const { blocks } = await follow('cadence-switch', 3 + FINALITY_READ_EVERY, (blocksFollowed) => blocksFollowed < 3)
  assert.equal(blocks.length, 3 + FINALITY_READ_EVERY)
  assert.equal(tagReads(), 3 + 1, 'three heads while awaited, then one read after the cadence')
})
