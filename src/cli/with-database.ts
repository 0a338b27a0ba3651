import type { Config } from '../config/config.ts'
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
