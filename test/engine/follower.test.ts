// The block follower alone, against Anvil: typed events in chain order, gaps filled, reorgs walked
// back to the common ancestor, finality from the RPC tag, the stored window pruned below it, and a
// failed sink never marks a block processed.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pino from 'pino'
import { createBlockFollower, type FollowerEvent } from '../../src/engine/block-follower.ts'
import { BlockWindow } from '../../src/domain/block-window.ts'
import { createChainReader } from '../../src/chain/chain-reader.ts'
import { builtInChains } from '../../src/config/chains.ts'
import { loadChainWindow } from '../../src/store/chain-blocks.ts'
import { useTestDatabase } from '../support/database.ts'
import { mine, startAnvil, type Anvil } from '../support/index.ts'

let anvil: Anvil
const database = useTestDatabase()

before(async () => {
  anvil = await startAnvil({ slotsInAnEpoch: 1 })
})
after(async () => {
  await anvil?.stop()
})

const chain = { ...builtInChains().ethereum!, name: 'follower-test', chainId: 31337, rpc: ['http://unused'] }

function follower(events: FollowerEvent[], fail?: () => boolean) {
  return createBlockFollower({
    chain,
    reader: createChainReader(anvil.publicClient),
    db: database.db,
    logger: pino({ level: 'silent' }),
    pruneSlack: 4,
    // Finality read at every head: what these steps assert (the cadence: finality-cadence.test.ts).
    finality: { every: 1 },
    sink: async (event) => {
      if (fail?.()) throw new Error('sink failed')
      events.push(event)
    },
  })
}
const describe = (events: FollowerEvent[]) =>
  events.map((e) =>
    e.type === 'block'
      ? `block ${e.block.number}`
      : e.type === 'reorg'
        ? `reorg to ${e.ancestor} (-${e.removed.length})`
        : `finalize ${e.finalized}`,
  )

test('blocks in order, gaps filled, reorgs resolved, finality followed, stored window pruned', async () => {
  await mine(anvil, 3)
  const events: FollowerEvent[] = []
  const first = follower(events)
  assert.equal(await first.sync(), true)
  assert.deepEqual(describe(events), ['block 3', 'finalize 1'], 'a first start begins at the head')

  events.length = 0
  await mine(anvil, 4)
  await first.sync()
  assert.deepEqual(describe(events), ['block 4', 'block 5', 'block 6', 'block 7', 'finalize 5'], 'every block of the gap, then finality')
  const blockEvents = events.filter((e) => e.type === 'block')
  assert.deepEqual(
    blockEvents.map((e) => e.finalized),
    [4n, 5n, 5n, 5n],
    'each block carries the finalized number (capped at itself)',
  )

  events.length = 0
  const before = await anvil.publicClient.getBlock({ blockNumber: 6n })
  await anvil.reorg(2)
  await first.sync()
  assert.deepEqual(describe(events), ['reorg to 5 (-2)', 'block 6', 'block 7'])
  const reorg = events[0] as Extract<FollowerEvent, { type: 'reorg' }>
  assert.equal(reorg.removed[0]!.hash, before.hash)
  assert.equal(first.holds(6n, before.hash), false)
  assert.equal(first.holds(6n, (await anvil.publicClient.getBlock({ blockNumber: 6n })).hash), true)

  await mine(anvil, 6)
  assert.equal(await first.sync(4), false, 'stopped at 4 blocks: more to do')
  assert.equal(first.state.head!.number, 11n)
  assert.equal(await first.sync(4), true)
  const stored = await loadChainWindow(database.db, chain.name)
  assert.equal(stored.at(-1)!.number, 13n)
  assert.ok(stored[0]!.number >= 7n && stored[0]!.number <= 11n, `pruned below the finalized block (oldest ${stored[0]!.number})`)
  assert.equal(new BlockWindow(stored).size, stored.length, 'the stored window is linked by parentHash')

  // A new follower (a restart) resumes after block 13, and a failing sink records nothing.
  events.length = 0
  let failures = 2
  const restarted = follower(events, () => failures-- > 0)
  await mine(anvil, 2)
  await assert.rejects(restarted.sync(), /sink failed/)
  await assert.rejects(restarted.sync(), /sink failed/)
  assert.equal((await loadChainWindow(database.db, chain.name)).at(-1)!.number, 13n, 'nothing recorded while the sink fails')
  await restarted.sync()
  assert.deepEqual(
    describe(events).filter((e) => e.startsWith('block')),
    ['block 14', 'block 15'],
  )
})

test('the window: linking, truncation on reorg, pruning below finality', () => {
  const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const
  const block = (n: number, parent = n - 1) => ({ number: BigInt(n), hash: hash(n), parentHash: hash(parent), timestamp: 0n })
  const window = new BlockWindow([block(10), block(11), block(12)])
  assert.equal(window.extends(block(13)), true)
  assert.equal(window.extends({ number: 13n, parentHash: hash(99) }), false)
  assert.throws(() => window.push(block(14)))
  window.push(block(13))
  assert.deepEqual(
    window.truncateAbove(11n).map((b) => b.number),
    [12n, 13n],
  )
  assert.equal(window.tip!.number, 11n)
  window.pruneBelow(11n)
  assert.equal(window.oldest!.number, 11n)
  window.pruneBelow(50n)
  assert.equal(window.size, 1, 'the tip is always kept')
  assert.equal(window.holds(11n, hash(11)), true)
  assert.equal(window.holds(5n, hash(5)), undefined)
  assert.equal(new BlockWindow([block(1), block(2), block(4, 3)]).oldest!.number, 4n, 'a stored window with a hole restarts after it')
})

test('reached: answered as the blocks are processed, false when the syncs end short of the block', async () => {
  const reachedFollower = createBlockFollower({
    chain: { ...chain, name: 'reached-test' },
    reader: createChainReader(anvil.publicClient),
    db: database.db,
    logger: pino({ level: 'silent' }),
    sink: async () => {},
  })
  await reachedFollower.sync()
  const head = reachedFollower.state.head!.number
  assert.equal(await reachedFollower.reached(head), true, 'processed already')
  assert.equal(await reachedFollower.reached(head + 1n), false, 'no sync under way: not reached')

  let hold!: () => void
  const held = new Promise<void>((resolve) => (hold = resolve))
  const answers: string[] = []
  const heldFollower = createBlockFollower({
    chain: { ...chain, name: 'reached-test' },
    reader: createChainReader(anvil.publicClient),
    db: database.db,
    logger: pino({ level: 'silent' }),
    sink: () => held,
  })
  await mine(anvil, 2)
  const syncing = heldFollower.sync()
  const next = heldFollower.reached(head + 1n).then((reached) => void answers.push(`next ${reached}`))
  const beyond = heldFollower.reached(head + 3n).then((reached) => void answers.push(`beyond ${reached}`))
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(answers, [], 'nothing answered while the sync holds the block')
  hold()
  await syncing
  await Promise.all([next, beyond])
  assert.equal(heldFollower.state.head!.number, head + 2n)
  assert.deepEqual(
    answers,
    ['next true', 'beyond false'],
    'the next block as it was processed, the one beyond when the sync ended short of it',
  )
})
