// The head a newHeads notification announces: the head signal hands over the notified header, and the
// follower takes the header of the block right after its own as the head instead of asking the RPC for
// the latest block (one round trip less per block); anything else is asked for as before.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pino from 'pino'
import { getWebSocketRpcClient } from 'viem/utils'
import { createBlockFollower, type FollowerEvent } from '../../src/engine/block-follower.ts'
import { createHeadSignal } from '../../src/engine/head-signal.ts'
import { createChainReader, type ChainReader } from '../../src/chain/chain-reader.ts'
import { builtInChains } from '../../src/config/chains.ts'
import type { BlockHeader } from '../../src/domain/block-window.ts'
import { useTestDatabase } from '../support/database.ts'
import { mine, startAnvil, type Anvil } from '../support/index.ts'

let anvil: Anvil
const database = useTestDatabase()

before(async () => {
  anvil = await startAnvil()
})
after(async () => {
  await anvil?.stop()
})

const chain = { ...builtInChains().ethereum!, name: 'announced-head-test', chainId: 31337, rpc: ['http://unused'] }

/** A real reader that counts the times it was asked for the latest header. */
function countingReader(): { reader: ChainReader; latestAsked: () => number } {
  const real = createChainReader(anvil.publicClient)
  let asked = 0
  return {
    reader: {
      ...real,
      header: (ref) => {
        if (ref === 'latest') asked++
        return real.header(ref)
      },
    },
    latestAsked: () => asked,
  }
}

async function headerOf(number: bigint): Promise<BlockHeader> {
  const block = await anvil.publicClient.getBlock({ blockNumber: number })
  return { number: block.number, hash: block.hash, parentHash: block.parentHash, timestamp: block.timestamp }
}

test('the head signal hands over the header of the last newHeads notification, once', async () => {
  const signal = createHeadSignal({ wsUrl: anvil.wsUrl })
  try {
    const controller = new AbortController()
    // The first wake-up is the subscription's own (heads may have been missed while it was down).
    await signal.next(10_000, controller.signal)
    assert.equal(signal.subscribed, true)
    signal.takeAnnounced()
    await mine(anvil, 1)
    await signal.next(10_000, controller.signal)
    const expected = await headerOf(await anvil.publicClient.getBlockNumber())
    assert.deepEqual(signal.takeAnnounced(), expected)
    assert.equal(signal.takeAnnounced(), undefined, 'handed over once')
  } finally {
    await signal.stop()
    // The signal's socket (viem keeps one per URL and options) would keep this test process alive.
    ;(await getWebSocketRpcClient(anvil.wsUrl, { keepAlive: true, reconnect: true })).close()
  }
})

test('the follower takes an announced next block as the head, and asks for the latest block otherwise', async () => {
  const { reader, latestAsked } = countingReader()
  const events: FollowerEvent[] = []
  const follower = createBlockFollower({
    chain,
    reader,
    db: database.db,
    logger: pino({ level: 'silent' }),
    sink: async (event) => void events.push(event),
  })
  await mine(anvil, 1)
  await follower.sync()
  const start = follower.state.head!.number
  const asked = latestAsked()

  await mine(anvil, 1)
  assert.equal(await follower.sync(undefined, await headerOf(start + 1n)), true)
  assert.equal(latestAsked(), asked, 'the announced next block is the head: no request for the latest block')
  assert.equal(follower.state.head!.number, start + 1n)
  assert.equal(follower.state.head!.hash, (await headerOf(start + 1n)).hash)

  // Announced two blocks ahead (a notification missed): the RPC is asked, and both blocks follow.
  await mine(anvil, 2)
  await follower.sync(undefined, await headerOf(start + 3n))
  assert.equal(latestAsked(), asked + 1)
  assert.equal(follower.state.head!.number, start + 3n)

  // A next block on another parent is no head of ours: asked for again.
  await mine(anvil, 1)
  const foreign = { ...(await headerOf(start + 4n)), parentHash: `0x${'ab'.repeat(32)}` as const }
  await follower.sync(undefined, foreign)
  assert.equal(latestAsked(), asked + 2)
  assert.equal(follower.state.head!.number, start + 4n)
  const blocks = events.filter((e) => e.type === 'block').map((e) => (e.type === 'block' ? e.block.number : 0n))
  assert.deepEqual(blocks.slice(-4), [start + 1n, start + 2n, start + 3n, start + 4n], 'every block once, in order')
})

test("the sink hears of the next block's header before the block is read, and may record the block with its own writes", async () => {
  const reader = createChainReader(anvil.publicClient)
  const prepared: bigint[] = []
  const seen: { block: bigint; preparedBefore: boolean }[] = []
  let fail = false
  const follower = createBlockFollower({
    chain: { ...chain, name: 'prepare-and-record-test' },
    reader,
    db: database.db,
    logger: pino({ level: 'silent' }),
    prepare: (header) => void prepared.push(header.number),
    sink: async (event) => {
      if (event.type !== 'block') return
      seen.push({ block: event.block.number, preparedBefore: prepared.includes(event.block.number) })
      if (fail) throw new Error('the block could not be handled')
      // Recorded in the sink's own transaction, as the verdicts' round does.
      await database.db.transaction().execute((trx) => event.record!.insert(trx).execute())
      return 'recorded'
    },
  })
  const stored = async () =>
    (await database.db.selectFrom('chain_blocks').select('number').where('chain', '=', 'prepare-and-record-test').execute()).map((row) =>
      BigInt(row.number),
    )
  await mine(anvil, 1)
  await follower.sync()
  const start = follower.state.head!.number
  assert.deepEqual(prepared, [], 'the first block is no next block of a window')

  await mine(anvil, 1)
  await follower.sync(undefined, await headerOf(start + 1n))
  assert.deepEqual(seen.at(-1), { block: start + 1n, preparedBefore: true })
  // Two blocks at once: the head is not the next block; nothing is prepared, both are read.
  await mine(anvil, 2)
  await follower.sync()
  assert.deepEqual(prepared, [start + 1n])
  assert.deepEqual(await stored(), [start, start + 1n, start + 2n, start + 3n], 'each block recorded once, by the sink or the follower')

  // A sink that fails records nothing: the block is handled again.
  fail = true
  await mine(anvil, 1)
  await assert.rejects(follower.sync())
  assert.deepEqual((await stored()).at(-1), start + 3n)
  fail = false
  await follower.sync()
  assert.deepEqual((await stored()).at(-1), start + 4n)
  assert.equal(follower.state.head!.number, start + 4n)
})
