import type { Tracking } from '../domain/tracking.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { findOwedSearchStart, settleOwedSearch } from '../store/owed-checks.ts'
import type { FastPathResult } from './fast-path.ts'

export interface TraceSearchesDeps {
  db: Db
  /**
   * Searches the blocks from `from` that the follower passed before the trace was stored (fast-path.ts
   * `searchPassedBlocks`): whether it judged the trace; undefined when this node cannot (it does not follow).
   */
  search(tracking: Tracking, from: bigint): Promise<boolean | undefined>
}

/**
 * A trace's check: the search owed to it (store/owed-checks.ts), run now unless it runs already or none is
 * owed any more (then 'waiting').
 */
export type TraceSearch = (tracking: Tracking) => Promise<FastPathResult>

/**
 * A trace stored after the chain's follower passed its `after_block` may have been paid in the blocks it
 * passed: its check searches them. The node that stores the trace runs it at once when it follows the chain;
 * where it does not, or stopped first, the row stays, and the follower runs it (fast-path-checks.ts
 * `resume`), as it goes on with a search that read only part of its blocks in one turn (a native trace's,
 * read one by one). One search of a trace at a time on a node; the row is read again first, as another run
 * may have settled it since this one was asked for.
 */
export function createTraceSearch(deps: TraceSearchesDeps): TraceSearch {
  const running = new Set<string>()
  return async (tracking) => {
    if (running.has(tracking.id)) return 'waiting'
    running.add(tracking.id)
    try {
      const from = await findOwedSearchStart(deps.db, tracking.id)
      if (from === undefined) return 'waiting'
      const judged = await deps.search(tracking, from)
      if (judged === undefined) return 'waiting'
      // A search that stopped short owed the rest from a later block: that row stays.
      await settleOwedSearch(deps.db, tracking.id, from)
      return judged ? 'judged' : 'waiting'
    } finally {
      running.delete(tracking.id)
    }
  }
}
