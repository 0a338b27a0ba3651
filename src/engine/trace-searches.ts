import type { Logger } from 'pino'
import { failureFields } from '../chain/rpc-failure.ts'
import { isRetryable } from '../common/errors.ts'
import type { Tracking } from '../domain/tracking.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findOwedTraceSearch, findOwedTraceSearches, settleTraceSearch } from '../store/trace-searches.ts'
import type { FastPathResult } from './fast-path.ts'

export interface TraceSearchesDeps {
  db: Db
  chain: string
  logger: Logger
  /** Whether this node follows the chain now: only its follower knows which blocks it passed. */
  following(): boolean
  /**
   * Searches the blocks from `from` that the follower passed before the trace was stored (fast-path.ts
   * `searchPassedBlocks`): whether it judged the trace; undefined when this node cannot (it does not follow).
   */
  search(tracking: Tracking, from: bigint): Promise<boolean | undefined>
}

export interface TraceSearches {
  /** Runs the search owed to `tracking` now, unless it runs already or none is owed (then 'waiting'). */
  run(tracking: Tracking): Promise<FastPathResult>
  /**
   * Runs the chain's owed searches that this node is not running, oldest first, when it follows the chain:
   * those of traces stored by another node, or before a restart, and those a search left partly done.
   */
  poll(): Promise<void>
}

/** Owed searches one poll takes: each runs in turn with the follower, so a poll is at most this many turns. */
const POLL_MOST = 100

/**
 * The searches owed to nonce-less traces (store/trace-searches.ts): a trace stored after the chain's follower
 * passed its `after_block` may have been paid in the blocks it passed. The node that stores the trace runs
 * its search at once when it follows the chain (the fast path); the row stays until a search covered its
 * blocks, so that the follower runs it where that node does not follow the chain or stopped first, and goes
 * on with one that read only part of its blocks in one turn (a native trace's, read one by one).
 */
export function createTraceSearches(deps: TraceSearchesDeps): TraceSearches {
  const running = new Set<string>()
  let polling = false

  const run = async (tracking: Tracking): Promise<FastPathResult> => {
    if (running.has(tracking.id)) return 'waiting'
    running.add(tracking.id)
    try {
      // Read again: another run may have settled it since this one was asked for.
      const from = await findOwedTraceSearch(deps.db, tracking.id)
      if (from === undefined) return 'waiting'
      const judged = await deps.search(tracking, from)
      if (judged === undefined) return 'waiting'
      // A search that stopped short owed the rest from a later block: that row stays.
      await settleTraceSearch(deps.db, tracking.id, from)
      return judged ? 'judged' : 'waiting'
    } finally {
      running.delete(tracking.id)
    }
  }

  const poll = async () => {
    if (polling || !deps.following()) return
    polling = true
    try {
      for (const owed of await findOwedTraceSearches(deps.db, deps.chain, POLL_MOST)) {
        if (!deps.following()) return
        if (!owed.tracking) {
          await settleTraceSearch(deps.db, owed.trackingId)
          continue
        }
        try {
          await run(owed.tracking)
        } catch (error) {
          const log = deps.logger.child({ chain: deps.chain, tracking: owed.trackingId })
          if (isRetryable(error)) {
            // The RPC or the follower is behind: the others would wait for the same. The next poll goes on.
            log.warn(failureFields(error), 'searching the blocks passed before a trace was stored failed; retrying')
            return
          }
          // As the fast path does: the blocks to come still judge it; a search that cannot succeed is not run again.
          log.error(
            failureFields(error),
            'the blocks passed before a trace was stored could not be searched; the blocks to come will judge it',
          )
          await settleTraceSearch(deps.db, owed.trackingId)
        }
      }
    } finally {
      polling = false
    }
  }

  return { run, poll }
}
