import type { Logger } from 'pino'
import { TransactionReceiptNotFoundError, type Hash } from 'viem'
import { createEvidenceReader, type EvidenceReader, type FetchedTransaction } from '../chain/payment-evidence.ts'
import type { ChainHandle } from '../chain/registry.ts'
import { checkTransactionHash, recoverTransactionSender } from '../chain/signed-transaction.ts'
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
 *
 * The transaction's signed fields (nonce, receiver, value, input) are checked locally, once: when they
 * hash to the transaction's hash, the hash alone fixes them, and each other provider is asked only for
 * the receipt (status, sender, inclusion block, logs) and, for a native payment through a contract,
 * the trace. The sender is not hashed: each provider's vote carries the sender its own receipt states,
 * so a provider that names another sender contradicts the others (a secp256k1 recovery per verdict,
 * ~1.8 ms of CPU, would cost a block of ten verdicts ~18 ms; it is done only for a receipt without a
 * sender). A transaction whose fields do not hash to its hash is a lie of the provider that returned
 * it: never a vote, counted as a disagreement.
 */
export function createEvidenceQuorum(deps: { handle: ChainHandle; evidence: EvidenceReader; logger: Logger }): EvidenceQuorum {
  const { handle } = deps
  const { pool } = handle
  const log = deps.logger.child({ chain: handle.config.name })
  let readers: EvidenceReader[] | undefined
  const pick = (...keys: string[]) => keys.map((key) => pool.answeredBy(key)).find((i) => i !== undefined)
  const traceFrom = (tx: MinedTransaction) => pick(`debug_traceTransaction:${tx.hash}`, `trace_transaction:${tx.hash}`)

  /** The one provider that answered the receipt (and trace) the judged evidence rests on, if known. */
  const receiptSourceOf = (tx: MinedTransaction): number | undefined => {
    const receiptFrom = pick(
      `eth_getTransactionReceipt:${tx.hash}`,
      `eth_getBlockReceipts:${tx.blockNumber}`,
      `eth_getBlockReceipts:${tx.blockHash.toLowerCase()}`,
    )
    const trace = traceFrom(tx)
    return trace === undefined || trace === receiptFrom ? receiptFrom : undefined
  }

  /** The one provider that answered every read the judged evidence rests on (fields unchecked), if known. */
  const sourceOf = (tx: MinedTransaction): number | undefined => {
    const txFrom = pick(`eth_getTransactionByHash:${tx.hash}`, `eth_getBlockByNumber:${tx.blockNumber}`)
    return txFrom !== undefined && txFrom === receiptSourceOf(tx) ? txFrom : undefined
  }

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
      // Which provider gave these fields is not known for sure (several reads may have): the
      // providers are asked below, and the one that returns them again is counted.
    }
    for (const i of pool.order()) {
      const tx = await handle.providerClients[i]!.getTransaction({ hash: hash as Hash }).catch(() => undefined)
      if (!tx || tx.blockNumber === null) continue
      const check = checkTransactionHash(tx)
      if (check === 'valid') return tx
      if (check === 'unsupported') return 'unsupported'
      lied(i, hash)
    }
    return undefined
  }

  return {
    async confirm(expectation, match) {
      const quorum = handle.config.quorum
      if (quorum <= 1) return { outcome: 'agreed' }
      const all = (readers ??= handle.providerClients.map((client) => createEvidenceReader(client)))
      const judged = judgedOf(match)
      const native = expectation.token === NATIVE_TOKEN
      const groups = new Map<string, { providers: number[]; tx: MinedTransaction }>()
      let decided: string | undefined
      const fields = await signedFields(match.transaction)
      if (fields === undefined) return { outcome: 'undecided', answers: 0 }
      const checked = fields === 'unsupported' ? undefined : fields
      let recovering: Promise<string | undefined> | undefined
      const recovered = () => (recovering ??= checked ? recoverTransactionSender(checked) : Promise.resolve(undefined))

      /** Provider `i`'s evidence: with checked fields, its receipt (and trace) only; else all of it. */
      const answerOf = async (i: number): Promise<MinedTransaction | null> => {
        if (!checked) return all[i]!.fromHash(match.transaction, { native })
        const receipt = await handle.providerClients[i]!.getTransactionReceipt({ hash: match.transaction as Hash }).catch((error) => {
          if (error instanceof TransactionReceiptNotFoundError) return null
          throw error
        })
        if (!receipt) return null
        // The sender as this provider states it: a receipt from another sender contradicts.
        const from = receipt.from ?? (await recovered())
        if (!from) return null
        return all[i]!.fromFetched({ ...checked, from }, receipt, { native })
      }

      // The first answer: the provider the judged evidence came from, when one provider gave it (its
      // vote is that evidence); the others check it. With checked fields, the evidence must have been
      // built from those very fields, and only its receipt's (and trace's) provider matters.
      let source: number | undefined
      if (judged && checked) {
        const seen = deps.evidence.seen(match.transaction)
        const same = seen?.tx === checked && evidenceFingerprint(expectation, seen.mined) === evidenceFingerprint(expectation, judged)
        source = same ? receiptSourceOf(judged) : undefined
      } else if (judged) source = sourceOf(judged)
      if (judged && source !== undefined) groups.set(evidenceFingerprint(expectation, judged), { providers: [source], tx: judged })
      const vote = async (i: number): Promise<string | undefined> => {
        const tx = await answerOf(i).catch(() => undefined)
        if (!tx || tx.internalValueUnknown) return undefined
        const print = evidenceFingerprint(expectation, tx)
        const group = groups.get(print) ?? { providers: [], tx }
        group.providers.push(i)
        groups.set(print, group)
        return print
      }
      // Lagging providers are ranked last: asked only when the others did not make a quorum, and a
      // provider that has not reached the block answers null, which is no answer.
      for (const i of pool.order()) {
        if (i === source) continue
        const print = await vote(i)
        if (print !== undefined && groups.get(print)!.providers.length >= quorum) {
          decided = print
          break
        }
      }
      const asked = new Set([...groups.values()].flatMap((g) => g.providers))
      if (decided !== undefined && (!judged || evidenceFingerprint(expectation, judged) !== decided)) {
        // The verdict rested on other evidence: find who gave it (the rest are asked, only now).
        for (const i of pool.order()) if (!asked.has(i)) await vote(i)
      }
      const answers = [...groups.values()].reduce((n, g) => n + g.providers.length, 0)
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
