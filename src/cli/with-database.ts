import type { Config } from '../config/config.ts'
import { openDatabase, type Db } from '../store/infrastructure/database.ts'
import { migrate } from '../store/infrastructure/migrate.ts'
import { refuseBesideDev } from './beside-dev.ts'

/** Runs a CLI command against the configured database (migrated first, unless the command migrates itself) and closes it. */
export async function withDatabase<T>(config: Config, work: (db: Db) => Promise<T>, options: { migrate?: boolean } = {}): Promise<T> {
  // Beside a running `paywatch dev`, never silently on a folder dev does not read (src/cli/beside-dev.ts).
  refuseBesideDev(config)
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 })
  try {
    if (options.migrate !== false) await migrate(handle.db)
    return await work(handle.db)
  } finally {
    await handle.close()
  }
}
