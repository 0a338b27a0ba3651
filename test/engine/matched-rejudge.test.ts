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
  const trackings = new Map(entries.map((entry) => [entry.tracking.id, entry.tracking]))
  return {
    ids: () => [...kept.keys()],
    matched: async () => [...kept.values()],
    save: async (match) => {
      const tracking = trackings.get(match.trackingId)
      if (tracking) kept.set(tracking.id, { tracking, match })
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

test('a trace whose match is dropped is searched for in the blocks passed meanwhile; a failed search puts the match back', async () => {
  const asTrace = (entry: { tracking: Tracking; match: TrackingMatch }) => {
    Object.assign(entry.tracking, { sender: null, nonce: null, transaction: null, nonceless: true })
    return entry
  }
  const found = asTrace(matchedAt(10n, '0xbb'))
  const failing = asTrace(matchedAt(12n, '0xdd'))
  const nonceTracking = matchedAt(10n, '0xbb')
  const matches = memoryMatches([found, failing, nonceTracking])
  const { verdicts, searched } = notingVerdicts()
  const searches: [string, bigint, bigint, bigint][] = []
  const rejudge = createMatchedRejudge({
    chain: 'ethereum',
    matches,
    evidence: unreadable,
    verdicts,
    log: pino({ level: 'silent' }),
    catchUp: async (tracking, range) => {
      searches.push([tracking.id, range.from, range.upTo, range.finalized])
      if (tracking.id === failing.tracking.id) throw new NonRetryableError('no provider answered')
      return false
    },
  })
  const window = { holds: () => false, blocks: () => [] }
  await rejudge.run(14n, 5n, new Set(), undefined, window)
  assert.deepEqual(searched.sort(), [found.tracking.id, failing.tracking.id, nonceTracking.tracking.id].sort())
  assert.deepEqual(
    searches.sort(),
    [
      [found.tracking.id, 10n, 14n, 5n],
      [failing.tracking.id, 12n, 14n, 5n],
    ].sort(),
    "from the match's block up to the head; a nonce tracking is found by its nonce in the blocks to come",
  )
  assert.deepEqual(matches.ids(), [failing.tracking.id], 'the failed search leaves the match for the next block to drop again')
})
