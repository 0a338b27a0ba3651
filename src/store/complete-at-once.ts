import type { Completed, CompletionOptions, CompletionRequest } from './completion-types.ts'
import { completionParts, inRequestOrder, statusUpdateOf, watchOf } from './completion-parts.ts'
import { COMPLETION_GUARD_FAILED, writeCompletions } from './completion-writes.ts'
import type { Db } from './infrastructure/database.ts'

/** PostgreSQL's SQLSTATE for a unique index refusing a row (here: a sender and nonce another tracking of the account holds). */
const UNIQUE_VIOLATION = '23505'

/**
 * A batch of verdicts in one statement and no transaction (BEGIN, the lock read and COMMIT are three of a
 * paying block's statements; on the embedded database each is a turn of the main thread). It applies when
 * every tracking comes as the engine read it (`asRead`) without a link, each once: the link's latest
 * confirmation, which the long way reads under its lock, is then not needed, and the rest the statement
 * checks itself. Each row must still be pending, without a link and with a callback or not as read, and the
 * lease must hold (completion-writes.ts, `CompletionGuard`); a nonce-less success's sender and nonce must be
 * the account's only ones (the unique index). Else the statement fails as a whole, writes nothing, and this
 * answers undefined: the caller writes the batch the long way, which also says when the lease is lost and
 * leaves a success whose sender and nonce another tracking holds pending.
 */
export async function completeAtOnce(
  db: Db,
  requests: readonly CompletionRequest[],
  now: Date,
  options: CompletionOptions,
): Promise<(Completed | undefined)[] | undefined> {
  const ids = new Set(requests.map((r) => r.id))
  const fits = ids.size === requests.length && requests.every((r) => r.asRead && r.asRead.linkId === null)
  if (!fits) return undefined
  // In id order, as the long way locks them: two batches never wait on each other in a circle.
  const ordered = [...requests].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const { parts, deliveryOf } = completionParts(db, {
    watches: ordered.flatMap(watchOf),
    withCallback: ordered.filter((r) => r.asRead!.callback !== null).map((r) => r.id),
    dropped: ordered.filter((r) => r.dropMatch).map((r) => r.id),
    alsoWrite: options.alsoWrite,
    lease: options.lease,
    now,
  })
  const updates = ordered.map((r) => statusUpdateOf(r.id, r.completion, r.completion.status === 'success' ? now : null))
  try {
    const updated = await writeCompletions(db, updates, parts, now, {
      fence: options.fence,
      hasCallback: ordered.map((r) => r.asRead!.callback !== null),
    })
    return inRequestOrder(requests, updated, deliveryOf)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === COMPLETION_GUARD_FAILED || code === UNIQUE_VIOLATION) return undefined
    throw error
  }
}
