import * as links from '../store/links.ts'
import type { Link } from '../store/links.ts'
import { missingAccount, notFound, type AdminDeps, type NotFound } from './admin-deps.ts'

/**
 * Payment links of an account (docs/api.md §6). The name is taken as read: the admin API reads it
 * with `readOptionalName` (at most 200 characters), the CLI trims its option.
 */
export async function createLink(
  deps: AdminDeps,
  accountId: string,
  name: string | null,
): Promise<{ kind: 'created'; link: Link } | NotFound<'account'>> {
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  return { kind: 'created', link: await links.createLink(deps.db, accountId, name) }
}

export async function listLinks(deps: AdminDeps, accountId: string): Promise<{ kind: 'listed'; links: Link[] } | NotFound<'account'>> {
  const missing = await missingAccount(deps.db, accountId)
  if (missing) return missing
  return { kind: 'listed', links: await links.listLinks(deps.db, accountId) }
}

/** Removed as of the clock's now: the link takes no new payments and its payments are no longer listed. */
export async function removeLink(deps: AdminDeps, linkId: string): Promise<{ kind: 'removed' } | NotFound<'link'>> {
  return (await links.removeLink(deps.db, linkId, deps.clock())) ? { kind: 'removed' } : notFound('link')
}
