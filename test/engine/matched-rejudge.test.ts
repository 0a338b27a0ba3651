// The re-judging of matched trackings (matched-rejudge.ts) without a database: the matches are kept in
// memory behind the engine's MatchStore interface, and the verdicts it reaches are noted, not written.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pino from 'pino'
import type { EvidenceReader } from '../../src/chain/payment-evidence.ts'
import { NonRetryableError } from '../../src/common/errors.ts'
import type { Judgement, MinedTransaction } from '../../src/domain/judge.ts'
import type { Tracking } from '../../src/domain/tracking.ts'
import { createMatchedRejudge } from '../../src/engine/matched-rejudge.ts'
import type { Verdicts } from '../../src/engine/verdicts.ts'
import type { MatchStore, TrackingMatch } from '../../src/store/tracking-matches.ts'
import { testTracking } from '../support/trackings.ts'

/** Matches in memory, as the database keeps them for the engine. */
function memoryMatches(entries: { tracking: Tracking; match: TrackingMatch }[]): MatchStore & { ids(): string[] } {
  const kept = new Map(entries.map((entry) => [entry.tracking.id, entry]))
  return {
    ids: () => [...kept.keys()],
    matched: async () => [...kept.values()],
    save: async (match) => {
      const entry = kept.get(match.trackingId)
      if (entry) entry.match = match
    },
    drop: async (ids) => void ids.forEach((id) => kept.delete(id)),
    dropAbove: async (_chain, number) => {
      const dropped = [...kept.values()].filter((entry) => entry.match.blockNumber > number).map((entry) => entry.tracking.id)
      for (const id of dropped) kept.delete(id)
      return dropped
    },
  }
}

/** Verdicts that note what they were asked. */
function notingVerdicts() {
  const applied: { id: string; judgement: Judgement; stored: boolean }[] = []
  const searched: string[] = []
  const verdicts = {
    apply: async (tracking: Tracking, _expectation: unknown, judgement: Judgement, _match: unknown, stored: boolean) =>
      void applied.push({ id: tracking.id, judgement, stored }),
    searchingAgain: (id: string) => void searched.push(id),
    retain: () => {},
  } as unknown as Verdicts
  return { verdicts, applied, searched }
}

function matchedAt(blockNumber: bigint, blockHash: string, evidence = true): { tracking: Tracking; match: TrackingMatch } {
  const tracking = testTracking('account', { confirmations: 2 })
  const mined: MinedTransaction = {
    hash: tracking.transaction!,
    from: tracking.sender!,
    nonce: tracking.nonce!,
    reverted: false,
    blockNumber,
    blockHash,
    transfers: [],
  }
  return {
    tracking,
    match: {
      trackingId: tracking.id,
      chain: 'ethereum',
      blockNumber,
      blockHash,
      transaction: mined.hash,
      evidence: evidence ? { given: mined, consumer: mined } : null,
      pendingHashes: evidence ? null : { given: tracking.transaction, consumer: tracking.transaction },
    },
  }
}

const unreadable: EvidenceReader = {
  fromHash: async () => {
    throw new NonRetryableError('the provider answers this transaction with another one')
  },
} as unknown as EvidenceReader

test('matched trackings are judged again with each head, dropped when their block left the window, skipped when judged already', async () => {
  const kept = matchedAt(10n, '0xaa')
  const gone = matchedAt(10n, '0xbb')
  const skipped = matchedAt(9n, '0xcc')
  const lost = matchedAt(10n, '0xaa', false)
  const matches = memoryMatches([kept, gone, skipped, lost])
  const { verdicts, applied, searched } = notingVerdicts()
  const rejudge = createMatchedRejudge({ chain: 'ethereum', matches, evidence: unreadable, verdicts, log: pino({ level: 'silent' }) })
  const window = { holds: (number: bigint, hash: string) => (number === 10n ? hash === '0xaa' : undefined), blocks: () => [] }

  assert.equal(rejudge.judgedFinalized, -1n)
  assert.equal(await rejudge.run(10n, 5n, new Set([skipped.tracking.id]), undefined, window), 4)
  assert.deepEqual(
    searched.sort(),
    [gone.tracking.id, lost.tracking.id].sort(),
    'the block left the window; the evidence is unreadable for good',
  )
  assert.deepEqual(matches.ids().sort(), [kept.tracking.id, skipped.tracking.id].sort())
  assert.deepEqual(
    applied.map((a) => [a.id, a.judgement.status, a.stored]),
    [[kept.tracking.id, 'pending', true]],
    'one confirmation of two: still pending, from its stored evidence',
  )
  assert.equal(rejudge.judgedFinalized, 5n)

  await rejudge.run(11n, 5n, new Set(), undefined, window)
  const second = applied.filter((a) => a.id === kept.tracking.id).at(-1)!
  assert.notEqual(second.judgement.status, 'pending', 'two confirmations: a final verdict')
})
