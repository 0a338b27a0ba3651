import type { Logger } from 'pino'
import type { Hash } from 'viem'
import { answerSourceOf } from '../chain/answer-source.ts'
import { HEDGE_MAX_MS } from '../chain/hedge-delay.ts'
import { createEvidenceReader, type EvidenceReader, type FetchedTransaction } from '../chain/payment-evidence.ts'
import type { ChainHandle } from '../chain/registry.ts'
import { checkTransactionHash, recoverTransactionSender } from '../chain/signed-transaction.ts'
import type { Clock } from '../common/clock.ts'
import { NATIVE_TOKEN, type Expectation, type MinedTransaction } from '../domain/judge.ts'
import type { TrackingMatch } from '../store/tracking-matches.ts'
import { createQuorumDisputes } from './quorum-disputes.ts'
import { createQuorumReceipts } from './quorum-receipts.ts'
import { gatherVotes } from './quorum-votes.ts'

/**
 * - `agreed`: `quorum` distinct providers returned the evidence the verdict rests on;
 * - `corrected`: `quorum` providers agree on other evidence: the verdict must not be written, the
 *   match carries their evidence instead (judged again on the next block);
 * - `undecided`: not enough providers answered alike yet: the tracking stays pending.
 */
export type QuorumOutcome =
  | { outcome: 'agreed' }
  | { outcome: 'corrected'; match: TrackingMatch }
  /** `disputed`: providers contradict each other (reported once per state; checked again after a pause). */
  | { outcome: 'undecided'; answers: number; disputed?: boolean }

export interface EvidenceQuorum {
  /** Checks the evidence of a would-be final verdict with the chain's providers (quorum 1: agreed at once, no request). */
  confirm(expectation: Expectation, match: TrackingMatch): Promise<QuorumOutcome>
  /**
   * A block the chain's pending trackings may be paid in was announced: the voters a verdict in it would ask
   * (the providers ranked after the one that reads the block) are asked for its receipts now, beside the
   * block's own read, so that its verdicts wait for no round trip of the quorum (not while blocks come and
   * go without a verdict: quorum-receipts.ts).
   */
  prepare(blockHash: string): void
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
 * Quorum over a verdict's evidence. A vote is an answer one provider gave: the judged evidence counts
 * as the vote of the provider whose answer it was built from (the answer carries its sender,
 * src/chain/answer-source.ts; evidence read another way, or from a receipt and a trace, counts as
 * no one's), and every other vote is that provider's own answer to the quorum's request. Providers
 * are asked best ranked first, as many at once as the quorum still needs, each with a timeout of
 * its own shorter than the RPC timeout, and the next one is asked as soon as one gives no answer
 * or is slow (past its hedge delay): a hanging provider holds a verdict a moment, not the follower.
 * A provider that has not reached the inclusion block, one that fails, one that does not know the
 * transaction, and one without a trace for a native payment that needs it give no answer (none of
 * these is evidence). A provider that contradicts a quorum is counted, logged with both answers,
 * and sits out for a while. Providers that contradict each other with no quorum among them are all
 * counted and logged once per tracking and state, and the tracking is checked again after a
 * growing pause instead of on every block (quorum-disputes.ts).
 *
 * The transaction's signed fields (nonce, receiver, value, input) are checked locally, once: when they
 * hash to the transaction's hash, the hash alone fixes them, and each provider is asked only for
 * the receipt (status, sender, inclusion block, logs) and, for a native payment through a contract,
 * the trace. The sender is not hashed: each provider's vote carries the sender its own receipt states,
 * so a provider that names another sender contradicts the others (a secp256k1 recovery per verdict,
 * ~1.8 ms of CPU, would cost a block of ten verdicts ~18 ms; it is done only for a receipt without a
 * sender). A transaction whose fields do not hash to its hash is a lie of the provider that returned
 * it: never a vote, counted as a disagreement.
 */
export function createEvidenceQuorum(deps: {
  handle: ChainHandle
  evidence: EvidenceReader
  logger: Logger
  clock: Clock
}): EvidenceQuorum {
  const { handle } = deps
  const { pool } = handle
  const log = deps.logger.child({ chain: handle.config.name })
  const disputes = createQuorumDisputes({ clock: deps.clock })
  let readers: EvidenceReader[] | undefined
  const receipts = createQuorumReceipts(handle.providerClients)
  /** Lies already counted (the same answer judged again on the next block is the same lie). */
  const reported = new WeakSet<object>()
  /** One vote waits at most this long: a quarter of the RPC timeout, at most the longest hedge delay. */
  const voteTimeoutMs = Math.max(50, Math.min(HEDGE_MAX_MS, handle.config.rpcTimeoutMs / 4))
  const round = { timeoutMs: voteTimeoutMs, hedgeDelayMs: (i: number) => pool.hedgeDelayMs(i), onHedge: (i: number) => pool.hedged(i) }

  const lied = (i: number, hash: string) => {
    pool.disagreed(i)
    log.warn(
      { provider: pool.providers[i]!.label, transaction: hash },
      'RPC provider returned a transaction whose fields do not hash to its hash; it sits out for a while',
    )
  }

  /**
   * The judged transaction's fields, checked: the ones it was judged from when they check out, else
   * the first provider's that do. `unsupported`: a transaction type the check does not know (every
   * provider is then asked for the whole evidence); undefined: no provider returned it yet.
   */
  async function signedFields(hash: string): Promise<FetchedTransaction | 'unsupported' | undefined> {
    const seen = deps.evidence.seen(hash)?.tx
    if (seen) {
      const check = checkTransactionHash(seen)
      if (check !== 'invalid') return check === 'valid' ? seen : 'unsupported'
      // The provider whose answer (a block, a transaction) carried these fields lied; the providers
      // are asked below, and any that returns them again is counted too.
      const from = answerSourceOf(seen)
      if (from !== undefined && !reported.has(seen)) {
        reported.add(seen)
        lied(from, hash)
      }
    }
    const found = await gatherVotes<FetchedTransaction | 'unsupported'>({
      ...round,
      candidates: pool.order(),
      parallel: 1,
      async ask(i) {
        const tx = await handle.providerClients[i]!.getTransaction({ hash: hash as Hash })
        if (tx.blockNumber === null) return undefined
        const check = checkTransactionHash(tx)
        if (check === 'invalid') return void lied(i, hash)
        return check === 'valid' ? tx : 'unsupported'
      },
      enough: (answers) => answers.size > 0,
    })
    return found.values().next().value
  }

  return {
    prepare(blockHash) {
      receipts.prepare(pool.order().slice(1, handle.config.quorum), blockHash)
    },
    async confirm(expectation, match) {
      const quorum = handle.config.quorum
      if (quorum <= 1) return { outcome: 'agreed' }
      if (disputes.waiting(match.trackingId)) return { outcome: 'undecided', answers: 0, disputed: true }
      const all = (readers ??= handle.providerClients.map((client) => createEvidenceReader(client)))
      const judged = judgedOf(match)
      const judgedPrint = judged ? evidenceFingerprint(expectation, judged) : undefined
      const native = expectation.token === NATIVE_TOKEN
      const groups = new Map<string, { providers: number[]; tx: MinedTransaction }>()
      const fields = await signedFields(match.transaction)
      if (fields === undefined) return { outcome: 'undecided', answers: 0 }
      const checked = fields === 'unsupported' ? undefined : fields
      let recovering: Promise<string | undefined> | undefined
      const recovered = () => (recovering ??= checked ? recoverTransactionSender(checked) : Promise.resolve(undefined))

      /** Provider `i`'s evidence: with checked fields, its receipt (and trace) only; else all of it. */
      const answerOf = async (i: number): Promise<MinedTransaction | null> => {
        if (!checked) return all[i]!.fromHash(match.transaction, { native })
        const receipt = await receipts.receipt(i, match.transaction, judged?.blockHash)
        if (!receipt) return null
        // The sender as this provider states it: a receipt from another sender contradicts.
        const from = receipt.from ?? (await recovered())
        if (!from) return null
        return all[i]!.fromFetched({ ...checked, from }, receipt, { native })
      }
      const count = (i: number, tx: MinedTransaction): string => {
        const print = evidenceFingerprint(expectation, tx)
        const group = groups.get(print) ?? { providers: [], tx }
        if (!group.providers.includes(i)) group.providers.push(i)
        groups.set(print, group)
        return print
      }

      // The first vote: the provider whose answer the judged evidence was built from, when that is
      // known for this very evidence (its fingerprint) and these very fields.
      const seen = deps.evidence.seen(match.transaction)
      const source =
        checked &&
        judgedPrint !== undefined &&
        seen?.source !== undefined &&
        seen.tx === checked &&
        evidenceFingerprint(expectation, seen.mined) === judgedPrint
          ? seen.source
          : undefined
      if (source !== undefined) count(source, judged!)
      const decidedOf = () => [...groups.entries()].find(([, g]) => g.providers.length >= quorum)?.[0]
      /** Asks `candidates` until a quorum agrees (`untilDecided`), or every one of them. */
      const askAll = (candidates: number[], parallel: number, untilDecided: boolean) =>
        gatherVotes<MinedTransaction>({
          ...round,
          candidates,
          parallel,
          ask: async (i) => (await answerOf(i)) ?? undefined,
          enough(answers) {
            for (const [i, tx] of answers) if (!tx.internalValueUnknown) count(i, tx)
            return untilDecided && decidedOf() !== undefined
          },
        })
      // Lagging providers are ranked last: asked only when the others did not make a quorum, and a
      // provider that has not reached the block answers null, which is no answer.
      // Providers asked for the block's receipts at its announcement first (the ones ranked first then): their
      // votes cost no request more, where a ranking changed since would ask another provider for them again.
      const ranked = pool.order().filter((i) => i !== source)
      const prepared = checked && judged ? ranked.filter((i) => receipts.asked(i, judged.blockHash)) : []
      await askAll([...prepared, ...ranked.filter((i) => !prepared.includes(i))], quorum - (source === undefined ? 0 : 1), true)
      let decided = decidedOf()
      const asked = new Set([...groups.values()].flatMap((g) => g.providers))
      if (decided !== undefined && judgedPrint !== decided) {
        // The verdict rested on other evidence: find who gave it (the rest are asked, only now).
        const rest = pool.order().filter((i) => !asked.has(i))
        await askAll(rest, rest.length, false)
        // Two quorums on different evidence (more colluding providers than the quorum allows for):
        // none of them decides.
        if ([...groups.values()].filter((g) => g.providers.length >= quorum).length > 1) decided = undefined
      }
      const answers = [...groups.values()].reduce((n, g) => n + g.providers.length, 0)
      if (decided === undefined) {
        if (groups.size <= 1) return { outcome: 'undecided', answers }
        // Providers contradict each other and no quorum says which one is right: every one of them is
        // counted, once per tracking and state (the same answers again are the same dispute).
        const state = [...groups.entries()]
          .map(([print, g]) => `${g.providers.sort((a, b) => a - b).join(',')}=${print}`)
          .sort()
          .join('|')
        if (disputes.disputed(match.trackingId, state)) {
          for (const i of new Set([...groups.values()].flatMap((g) => g.providers))) pool.disputed(i)
          log.warn(
            {
              tracking: match.trackingId,
              transaction: match.transaction,
              answers: [...groups.entries()].map(([print, g]) => ({
                providers: g.providers.map((i) => pool.providers[i]!.label),
                answer: print,
              })),
            },
            'RPC providers disagree on the evidence and no quorum agrees; the tracking stays pending and is checked again after a pause',
          )
        }
        return { outcome: 'undecided', answers, disputed: true }
      }
      disputes.settled(match.trackingId)
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
      if (judgedPrint === decided) return { outcome: 'agreed' }
      log.warn(
        { transaction: match.transaction, judged: judgedPrint ?? null, agreed: decided },
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
