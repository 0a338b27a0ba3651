// A payment transaction whose evidence cannot be read for good (a NonRetryableError: the RPC's
// answer itself is the problem, asking again gives the same) is not read again on every block until
// the tracking times out: the block processor stops retrying it at once, logs it as an error, and
// keeps retrying only what may succeed later (a RetryableError). Real Anvil and a real database; the
// evidence reader is the real one, wrapped to fail for the two senders of the test.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pino from 'pino'
import { parseEther, type PublicClient } from 'viem'
import { NonRetryableChainError, RetryableChainError } from '../../src/chain/errors.ts'
import { createEvidenceReader, type EvidenceReader } from '../../src/chain/payment-evidence.ts'
import { NATIVE_TOKEN } from '../../src/domain/judge.ts'
import { createAccount } from '../../src/store/accounts.ts'
import { findMatchedTrackings } from '../../src/store/tracking-matches.ts'
import { followAnvil } from './follower-fixture.ts'
import { useTestDatabase } from '../support/database.ts'
import { mine, sendNative, startAnvil, type Anvil } from '../support/index.ts'
import { insertTestTracking, randomAddress } from '../support/trackings.ts'

let anvil: Anvil
const database = useTestDatabase()

before(async () => {
  anvil = await startAnvil()
})
after(async () => {
  await anvil?.stop()
})

test('evidence that fails for good is not read again on every block; a retryable failure is', async () => {
  const [, alice, bob] = anvil.accounts
  // Alice's transaction fails once retryably (the match is stored and read again on the next
  // block), then for good; Bob's fails for good at once.
  const reads = { alice: 0, bob: 0 }
  const failing = (from: string): Error | undefined => {
    if (from.toLowerCase() === bob!.address.toLowerCase()) {
      reads.bob++
      return new NonRetryableChainError('receipt 0xbad does not belong to the transaction (test)')
    }
    if (from.toLowerCase() === alice!.address.toLowerCase()) {
      reads.alice++
      return reads.alice === 1
        ? new RetryableChainError('trace not there yet (test)')
        : new NonRetryableChainError('malformed receipt (test)')
    }
    return undefined
  }
  const failingEvidence = (client: PublicClient): EvidenceReader => {
    const real = createEvidenceReader(client)
    return {
      ...real,
      async fromFetched(tx, receipt, options) {
        const error = failing(tx.from)
        if (error) throw error
        return real.fromFetched(tx, receipt, options)
      },
      async fromHash(hash, options) {
        const tx = await client.getTransaction({ hash: hash as `0x${string}` })
        const error = failing(tx.from)
        if (error) throw error
        return real.fromHash(hash, options)
      },
    }
  }

  const lines: Record<string, unknown>[] = []
  const logger = pino({ level: 'info' }, { write: (raw: string) => void lines.push(JSON.parse(raw) as Record<string, unknown>) })
  const db = database.db
  const { follower } = followAnvil(anvil, db, { logger, evidence: failingEvidence })
  await follower.sync()

  const accountId = (await createAccount(db, 'evidence fail fast')).id
  const afterBlock = await anvil.publicClient.getBlockNumber()
  const trackings = []
  for (const sender of [alice!, bob!]) {
    const nonce = BigInt(await anvil.publicClient.getTransactionCount({ address: sender.address }))
    trackings.push(
      await insertTestTracking(db, accountId, {
        blockchain: 'ethereum',
        sender: sender.address.toLowerCase(),
        nonce,
        receiver: randomAddress(),
        token: NATIVE_TOKEN,
        amount: '1',
        decimals: 18,
        transaction: null,
        afterBlock,
        confirmations: 2,
      }),
    )
  }
  await sendNative(anvil, alice!, trackings[0]!.receiver as `0x${string}`, parseEther('1'))
  await sendNative(anvil, bob!, trackings[1]!.receiver as `0x${string}`, parseEther('1'))
  await follower.sync()
  for (let i = 0; i < 6; i++) {
    await mine(anvil, 1)
    await follower.sync()
  }

  assert.equal(reads.bob, 1, 'read once: the failure is final')
  assert.equal(reads.alice, 2, 'read again after the retryable failure, then no more')
  assert.deepEqual(await findMatchedTrackings(db, 'ethereum'), [], 'no match left behind to be read again on every block')
  const statuses = await db
    .selectFrom('trackings')
    .select('status')
    .where(
      'id',
      'in',
      trackings.map((t) => t.id),
    )
    .execute()
  assert.deepEqual(
    statuses.map((s) => s.status),
    ['pending', 'pending'],
    'left to the time-out, as before',
  )
  const errors = lines.filter((line) => line.level === 50)
  assert.equal(errors.length, 2, `one error line per tracking: ${JSON.stringify(errors)}`)
  for (const line of errors) assert.match(String(line.error), /\(test\)/)
})
