import type { Clock } from '../common/clock.ts'
import { findAccount } from '../store/accounts.ts'
import type { Db } from '../store/infrastructure/database.ts'

/** What every admin operation needs: the database and the one clock (the service's, or systemClock in the CLI). */
export interface AdminDeps {
  db: Db
  clock: Clock
}

/**
 * An id that names nothing (or another account's record). `what` is the word both interfaces use:
 * the HTTP adapter answers `404 <what> not found`, the CLI names the id it was given.
 */
export interface NotFound<What extends string = string> {
  kind: 'not-found'
  what: What
}

export const notFound = <What extends string>(what: What): NotFound<What> => ({ kind: 'not-found', what })

/** The account an operation acts for must exist: a typo is a not-found, never an empty list (docs/api.md §6). */
export async function missingAccount(db: Db, accountId: string): Promise<NotFound<'account'> | undefined> {
  return (await findAccount(db, accountId)) ? undefined : notFound('account')
}
