import { dirname, join, resolve } from 'node:path'
import { DEFAULT_DATA_DIR, type Config } from '../config/config.ts'
import { devDataDir } from './dev.ts'
import { runningDevSession, type DevSession } from './dev-session.ts'

/**
 * A CLI command run while `paywatch dev` runs (docs/operations.md, "paywatch dev"): dev keeps its embedded
 * database in <data dir>/dev, and that database is its process's alone. The command never works silently
 * on another folder: accounts and keys go through dev's admin API, anything else is refused naming dev's
 * folder. With DATABASE_URL dev and the command share that database, and nothing changes.
 */
export function devBeside(config: Config): { session: DevSession; dataDir: string } | null {
  if (config.databaseUrl) return null
  for (const dataDir of devFolders(config)) {
    const session = runningDevSession(dataDir)
    if (session) return { session, dataDir }
  }
  return null
}

/**
 * Where a running dev may keep its session: the configured data folder's `dev` folder and the folder
 * itself, and, with the default `./data`, the same in every folder above the working directory. A command
 * run from a subfolder of the project (`packages/client`) would otherwise open a `./data` of its own there.
 */
function devFolders(config: Config): string[] {
  const folders = [devDataDir(config), config.dataDir]
  if (config.dataDir !== resolve(DEFAULT_DATA_DIR)) return folders
  for (let folder = dirname(process.cwd()); ; folder = dirname(folder)) {
    const data = join(folder, 'data')
    folders.push(join(data, 'dev'), data)
    if (dirname(folder) === folder) return folders
  }
}

/** Thrown for a command that would open a database while `paywatch dev` runs: its one line says where dev's data is. */
export class DevRunningError extends Error {
  override name = 'DevRunningError'
  constructor(dev: { session: DevSession; dataDir: string }, config: Config) {
    super(
      `paywatch dev (process ${dev.session.pid}) is running with its data in ${dev.dataDir}` +
        (dev.dataDir === config.dataDir ? '' : `; this command would use ${config.dataDir}, which dev does not read`) +
        `. Use dev's admin API (${dev.session.api}/admin, the admin token its banner printed), or stop dev first.`,
    )
  }
}

/** Refuses (DevRunningError) when `paywatch dev` runs beside this command on the embedded database. */
export function refuseBesideDev(config: Config): void {
  const dev = devBeside(config)
  if (dev) throw new DevRunningError(dev, config)
}

/** A request to the running dev's admin API; answers the JSON body (null for 204), throws with the problem's detail. */
export async function devAdmin(session: DevSession, method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${session.api}${path}`, {
    method,
    headers: { authorization: `Bearer ${session.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (response.status === 204) return null
  const json = (await response.json()) as { detail?: string }
  if (!response.ok) throw new Error(`${method} ${path} on paywatch dev answered ${response.status}: ${json.detail ?? JSON.stringify(json)}`)
  return json
}
