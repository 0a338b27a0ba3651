import type { Logger } from 'pino'
import { createEvidenceReader, type EvidenceReader } from '../chain/payment-evidence.ts'
import type { ChainHandle } from '../chain/registry.ts'
import { NATIVE_TOKEN, type Expectation, type MinedTransaction } from '../domain/judge.ts'
import type { TrackingMatch } from '../store/tracking-matches.ts'

/**
 * - `agreed`: `quorum` distinct providers returned the evidence the verdict rests on;
 * - `corrected`: `quorum` providers agree on other evidence: the verdict must not be written, the
 *   match carries their evidence instead (judged again on the next block);
 * - `undecided`: not enough providers answered alike yet: the tracking stays pending.
 */
export type QuorumOutcome =
  | { outcome: 'agreed' }
  | { outcome: 'corrected'; match: TrackingMatch }
  | { outcome: 'undecided'; answers: number }

export interface EvidenceQuorum {
  /** Checks the evidence of a would-be final verdict with the chain's providers (quorum 1: agreed at once, no request). */
  confirm(expectation: Expectation, match: TrackingMatch): Promise<QuorumOutcome>
}

/** The judged transaction of a match (the nonce's consumer, else the given transaction). */
export function judgedOf(match: TrackingMatch): MinedTransaction | null {
  const { evidence } = match
  if (!evidence) return null
  const wanted = match.transaction.toLowerCase()
  return [evidence.consumer, evidence.given].find((tx) => tx?.hash.toLowerCase() === wanted) ?? null
}

/**
 * What must be the same for two providers to agree: the inclusion block (hash at its height), the
 * transaction's status, sender and nonce, and every value that reached the receiver and the fee
 * receiver (by token).
 */
export function evidenceFingerprint(expectation: Expectation, tx: MinedTransaction): string {
  const watched = new Set(
    [expectation.receiver, expectation.feeReceiver].filter((a): a is string => a !== null).map((a) => a.toLowerCase()),
  )
  const reached = new Map<string, bigint>()
  for (const t of tx.transfers) {
    const to = t.to.toLowerCase()
    if (!watched.has(to)) continue
    const key = `${to}:${t.token.toLowerCase()}`
    reached.set(key, (reached.get(key) ?? 0n) + t.amount)
  }
  return JSON.stringify([
    tx.hash.toLowerCase(),
    tx.blockNumber.toString(),
    tx.blockHash.toLowerCase(),
    tx.reverted,
    tx.from.toLowerCase(),
    tx.nonce.toString(),
    [...reached.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`),
  ])
}

/**
 * Quorum over a verdict's evidence: the providers are asked one after another, best ranked first,
 * until `quorum` of them return the same evidence (the first answer checked by the next ones, no
 * broadcast). A provider that has not reached the inclusion block, one that fails, one that does not know the
 * transaction, and one without a trace for a native payment that needs it give no answer (none of
 * these is evidence). A provider that contradicts the agreeing ones is counted, logged with both
 * answers, and sits out for a while.
 */
export function createEvidenceQuorum(deps: { handle: ChainHandle; logger: Logger }): EvidenceQuorum {
  const { handle } = deps
  const { pool } = handle
  const log = deps.logger.child({ chain: handle.config.name })
  let readers: EvidenceReader[] | undefined

  /** The one provider that answered every read the judged evidence rests on, if known. */
  const sourceOf = (tx: MinedTransaction): number | undefined => {
    const pick = (...keys: string[]) => keys.map((key) => pool.answeredBy(key)).find((i) => i !== undefined)
    const txFrom = pick(`eth_getTransactionByHash:${tx.hash}`, `eth_getBlockByNumber:${tx.blockNumber}`)
    const receiptFrom = pick(`eth_getTransactionReceipt:${tx.hash}`, `eth_getBlockReceipts:${tx.blockNumber}`)
    const traceFrom = pool.answeredBy(`debug_traceTransaction:${tx.hash}`)
    if (txFrom === undefined || txFrom !== receiptFrom) return undefined
    return traceFrom === undefined || traceFrom === txFrom ? txFrom : undefined
  }

  return {
    async confirm(expectation, match) {
      const quorum = handle.config.quorum
      if (quorum <= 1) return { outcome: 'agreed' }
      readers ??= handle.providerClients.map((client) => createEvidenceReader(client))
      const judged = judgedOf(match)
      const native = expectation.token === NATIVE_TOKEN
      const groups = new Map<string, { providers: number[]; tx: MinedTransaction }>()
      let decided: string | undefined
      // The first answer: the provider the judged evidence came from, when one provider gave all of
      // it (its vote is that evidence); the others check it.
      const source = judged ? sourceOf(judged) : undefined
      if (judged && source !== undefined) groups.set(evidenceFingerprint(expectation, judged), { providers: [source], tx: judged })
      // Lagging providers are ranked last: asked only when the others did not make a quorum, and a
      // provider that has not reached the block answers null, which is no answer.
      for (const i of pool.order()) {
        if (i === source) continue
        const tx = await readers[i]!.fromHash(match.transaction, { native }).catch(() => undefined)
        if (!tx || tx.internalValueUnknown) continue
        const print = evidenceFingerprint(expectation, tx)
        const group = groups.get(print) ?? { providers: [], tx }
        group.providers.push(i)
        groups.set(print, group)
        if (group.providers.length >= quorum) {
          decided = print
          break
        }
      }
      const answers = [...groups.values()].reduce((n, g) => n + g.providers.length, 0)
      const asked = new Set([...groups.values()].flatMap((g) => g.providers))
      if (decided !== undefined && (!judged || evidenceFingerprint(expectation, judged) !== decided)) {
        // The verdict rested on other evidence: find who gave it (the rest are asked, only now).
        for (const i of pool.order()) {
          if (asked.has(i)) continue
          const tx = await readers[i]!.fromHash(match.transaction, { native }).catch(() => undefined)
          if (!tx || tx.internalValueUnknown) continue
          const print = evidenceFingerprint(expectation, tx)
          const group = groups.get(print) ?? { providers: [], tx }
          group.providers.push(i)
          groups.set(print, group)
        }
      }
      if (decided === undefined) {
        if (groups.size > 1)
          log.warn({ transaction: match.transaction, answers: [...groups.keys()] }, 'RPC providers disagree on the evidence; no quorum yet')
        return { outcome: 'undecided', answers }
      }
      const agreed = groups.get(decided)!
      for (const [print, group] of groups) {
        if (print === decided) continue
        for (const i of group.providers) {
          pool.disagreed(i)
          log.warn(
            { provider: pool.providers[i]!.label, transaction: match.transaction, answer: print, agreed: decided },
            'RPC provider contradicts the agreeing providers; it sits out for a while',
          )
        }
      }
      if (judged && evidenceFingerprint(expectation, judged) === decided) return { outcome: 'agreed' }
      log.warn(
        { transaction: match.transaction, judged: judged ? evidenceFingerprint(expectation, judged) : null, agreed: decided },
        'the evidence a verdict rested on is contradicted by a quorum of providers; judging their evidence instead',
      )
      const replace = (tx: MinedTransaction | null) => (tx && tx.hash.toLowerCase() === agreed.tx.hash.toLowerCase() ? agreed.tx : tx)
      return {
        outcome: 'corrected',
        match: {
          ...match,
          blockNumber: agreed.tx.blockNumber,
          blockHash: agreed.tx.blockHash,
          evidence: { given: replace(match.evidence?.given ?? null), consumer: replace(match.evidence?.consumer ?? null) },
          pendingHashes: null,
        },
      }
    },
  }
}
