// Longer texts are built from lists of values (batch writes) and rarely repeat: not worth keeping.
const MAX_PREPARED_LENGTH = 4096
// Texts counted towards `preparedAfter` at most; the count starts over when it is reached.
const MAX_COUNTED = 1000

export interface StatementNameOptions {
  /** A statement text becomes a named prepared statement once it was run this often. */
  preparedAfter?: number
  /** At most this many statement texts are prepared: texts that vary stay unnamed. */
  maxPrepared?: number
}

export interface StatementNames {
  /** The name `text` is prepared under, undefined while it stays unnamed (this run is counted). */
  nameOf(text: string): string | undefined
  /** Forgets every name (the statements were closed). */
  clear(): void
}

/** Which statement texts run often enough to be worth a named prepared statement, and their names. */
export function createStatementNames(options: StatementNameOptions = {}): StatementNames {
  const preparedAfter = options.preparedAfter ?? 3
  const maxPrepared = options.maxPrepared ?? 500
  const seen = new Map<string, number>()
  const names = new Map<string, string>()
  let serial = 0
  return {
    nameOf(text) {
      const name = names.get(text)
      if (name !== undefined || names.size >= maxPrepared || text.length > MAX_PREPARED_LENGTH) return name
      const runs = (seen.get(text) ?? 0) + 1
      if (runs < preparedAfter) {
        // Texts that keep varying must not grow the count forever; a hot one is soon counted again.
        if (seen.size >= MAX_COUNTED) seen.clear()
        seen.set(text, runs)
        return undefined
      }
      seen.delete(text)
      const assigned = `pw_${++serial}`
      names.set(text, assigned)
      return assigned
    },
    clear() {
      names.clear()
      seen.clear()
    },
  }
}

/** true for a statement that opens a transaction, false for one that ends it, else undefined. */
export function transactionControl(sql: string): boolean | undefined {
  const head = sql.trimStart().slice(0, 17).toLowerCase()
  if (head.startsWith('begin') || head.startsWith('start transaction')) return true
  if (head.startsWith('commit') || (head.startsWith('rollback') && !head.startsWith('rollback to'))) return false
  return undefined
}

/** The prepared statement is outdated by a schema change, or no longer exists on the connection. */
export function isUnusableStatement(error: unknown): boolean {
  const code = (error as { code?: string }).code
  return (code === '0A000' && /cached plan must not change result type/.test((error as Error).message)) || code === '26000'
}
