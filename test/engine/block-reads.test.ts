// The reads of a block (block-reads.ts): those that do not need its transactions started when the next
// block's header is known, used by that block alone, and the block's receipts read ahead only while the
// chain has pending trackings (from its logs; whole while native nonce-less traces are pending, or traces
// where the RPC gives no logs by block hash), as its candidates' statement last told; the follow-up's reads
// (matched, watched) on their own.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pino from 'pino'
import type { TransactionReceipt } from 'viem'
import type { FullBlock } from '../../src/chain/chain-reader.ts'
import { createMetrics } from '../../src/common/metrics.ts'
import type { ReceiptSource } from '../../src/engine/block-evidence.ts'
import { createBlockReads } from '../../src/engine/block-reads.ts'
import { createEngineMetrics } from '../../src/engine/engine-metrics.ts'
import { createSuccessWatcher } from '../../src/engine/success-watch.ts'
import { createTrackingEvents } from '../../src/common/tracking-events.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { createMatchStore } from '../../src/store/tracking-matches.ts'
import { useTestDatabase } from '../support/database.ts'
import { insertTestTracking, randomAddress, randomHash } from '../support/trackings.ts'
import { NATIVE } from './support.ts'

const database = useTestDatabase()

/**
 * A receipt source that notes which blocks' receipts were read ahead, and how (`whole` or `logged`);
 * `logs: false`: an RPC that gives no block's logs by hash.
 */
function countingReceipts(options: { logs?: boolean } = {}): { source: ReceiptSource; asked: string[]; kinds: string[] } {
  const asked: string[] = []
  const kinds: string[] = []
  const none = new Map<string, TransactionReceipt>()
  const note = (hash: string, kind: string) => {
    asked.push(hash)
    kinds.push(kind)
    return none
  }
  return {
    asked,
    kinds,
    source: {
      receipts: async () => none,
      all: async () => none,
      whole: async (hash) => note(hash, 'whole'),
      logged: async (hash) => {
        const logged = note(hash, 'logged')
        return options.logs === false ? undefined : logged
      },
    },
  }
}

const blockWith = (hash: string, transactions: number) =>
  ({
    number: 5n,
    hash,
    timestamp: 1n,
    transactions: Array.from({ length: transactions }, () => ({ from: randomAddress(), nonce: 1, hash: randomHash() })),
  }) as unknown as FullBlock

/** A block's own reads as the processor makes them: its receipts started, then its candidates' statement (which tells the pending kinds). */
async function pendingSeenAt(reads: ReturnType<typeof readsFor>, block: FullBlock) {
  reads.start(block, true)
  return (await reads.candidates(block)).pending
}

function readsFor(chain: string, receipts: ReceiptSource) {
  const metrics = createEngineMetrics(createMetrics().registry, {
    now: () => new Date(),
    chains: [chain],
    countPending: async () => new Map(),
  })
  const successes = createSuccessWatcher({
    chain,
    db: database.db,
    events: createTrackingEvents(),
    logger: pino({ level: 'silent' }),
    metrics,
  })
  return createBlockReads({ chain, db: database.db, matches: createMatchStore(database.db, () => new Date()), receipts, successes })
}

test("the reads prepared for a header serve that block alone; another block's are read anew", async () => {
  const { source, asked } = countingReceipts()
  const reads = readsFor('ethereum', source)
  await insertTestTracking(database.db, (await createAccount(database.db, 'pending')).id)
  const announced = randomHash()
  reads.prepare({ number: 5n, hash: announced as `0x${string}`, parentHash: randomHash() as `0x${string}`, timestamp: 1n })
  const block = blockWith(announced.toUpperCase().replace('0X', '0x'), 3)
  assert.deepEqual(await pendingSeenAt(reads, block), { any: true, traces: false, nativeTraces: false, pastDeadline: false })
  assert.deepEqual(asked, [announced], 'read ahead once, when the header was known')
  const around = await reads.around({ number: 5n, hash: announced }, 0n, undefined)
  assert.ok(Array.isArray(around.matched) && Array.isArray(around.watched))

  // The block that came is another (a reorg, a notification missed): its own reads, nothing prepared left over.
  const other = randomHash()
  reads.prepare({ number: 6n, hash: randomHash() as `0x${string}`, parentHash: randomHash() as `0x${string}`, timestamp: 1n })
  reads.start(blockWith(other, 3), true)
  assert.equal(asked.at(-1), other)
  const again = randomHash()
  reads.start(blockWith(again, 3), false)
  assert.notEqual(asked.at(-1), again, 'a block caught up on reads only what its payments need')
})

test('without pending trackings on the chain, no block is read whole ahead', async () => {
  const { source, asked } = countingReceipts()
  const reads = readsFor('idle-chain', source)
  await pendingSeenAt(reads, blockWith(randomHash(), 3))
  const before = asked.length
  const next = randomHash()
  reads.prepare({ number: 7n, hash: next as `0x${string}`, parentHash: randomHash() as `0x${string}`, timestamp: 1n })
  await pendingSeenAt(reads, blockWith(next, 3))
  assert.equal(asked.length, before, 'the chain has nothing pending: no receipts read ahead')

  const account = await createAccount(database.db, 'block reads')
  await insertTestTracking(database.db, account.id, { blockchain: 'idle-chain' })
  await pendingSeenAt(reads, blockWith(randomHash(), 3))
  const paying = randomHash()
  reads.prepare({ number: 8n, hash: paying as `0x${string}`, parentHash: randomHash() as `0x${string}`, timestamp: 1n })
  assert.equal(asked.at(-1), paying, 'pending trackings again: read ahead')
})

test("a block's receipts are read ahead from its logs with token traces pending; whole with a native trace, or where the RPC gives no logs", async () => {
  for (const logs of [true, false]) {
    const { source, kinds } = countingReceipts({ logs })
    const chain = `traces-chain-${logs}`
    const reads = readsFor(chain, source)
    const account = await createAccount(database.db, `traces ${logs}`)
    await insertTestTracking(database.db, account.id, { blockchain: chain })
    await pendingSeenAt(reads, blockWith(randomHash(), 3))
    assert.deepEqual(await readAheadKinds(reads, kinds), ['logged'], 'nonce trackings alone: the logs tell the receipts the payments need')

    const trace = { blockchain: chain, nonceless: true, transaction: null, nonce: null }
    await insertTestTracking(database.db, account.id, { ...trace, token: randomAddress() })
    await pendingSeenAt(reads, blockWith(randomHash(), 3))
    assert.deepEqual(
      await readAheadKinds(reads, kinds),
      logs ? ['logged'] : ['logged', 'whole'],
      logs ? 'a token trace is pending: a token payment is a log' : 'no logs by hash: matching by receiver reads every receipt',
    )

    await insertTestTracking(database.db, account.id, { ...trace, token: NATIVE })
    assert.deepEqual(
      await pendingSeenAt(reads, blockWith(randomHash(), 3)),
      { any: true, traces: true, nativeTraces: true, pastDeadline: false },
      'the native trace is seen, whatever the case of its token',
    )
    assert.deepEqual(await readAheadKinds(reads, kinds), ['whole'], 'a native trace is pending: its payment may emit no log')
  }
})

/** The reads ahead made for the next block announced, once they have settled. */
async function readAheadKinds(reads: ReturnType<typeof readsFor>, kinds: string[]): Promise<string[]> {
  kinds.length = 0
  const hash = randomHash() as `0x${string}`
  reads.prepare({ number: 9n, hash, parentHash: randomHash() as `0x${string}`, timestamp: 1n })
  await reads.start(blockWith(hash, 3), true).receipts
  return [...kinds]
}
