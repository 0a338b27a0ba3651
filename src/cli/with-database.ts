import type { Config } from '../config/config.ts'
import { findAccount } from '../store/accounts.ts'
import { openDatabase, type Db } from '../store/database.ts'
import { migrate } from '../store/migrate.ts'

/** Runs a CLI command against the configured database (migrated first) and closes it. */
export async function withDatabase<T>(config: Config, work: (db: Db) => Promise<T>): Promise<T> {
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 })
  try {
    await migrate(handle.db)
    return await work(handle.db)
  } finally {
    await handle.close()
  }
}

/** An account id given on the command line must name an account: a typo fails, as the admin API's 404 does. */
export async function requireAccount(db: Db, id: string): Promise<void> {
  if (!(await findAccount(db, id))) throw new Error(`account ${id} not found`)
}
