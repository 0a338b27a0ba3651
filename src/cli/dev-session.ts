import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * What a running `paywatch dev` tells later commands (`paywatch dev pay`, and the CLI commands that go
 * through its admin API while it runs): written in its data folder, readable by its owner only.
 */
export interface DevSession {
  api: string
  apiKey: string
  adminToken: string
  rpc: string
  /** The DUSD token deployed on this run's Anvil. */
  token: string
  pid: number
}

/** Anvil's interval mining under `paywatch dev`: a block every 2 s. */
export const DEV_BLOCK_SECONDS = 2

const SESSION_FILE = 'dev-session.json'

export function writeDevSession(dataDir: string, session: DevSession): void {
  writeFileSync(join(dataDir, SESSION_FILE), `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 })
}

/** The session of the `paywatch dev` running on `dataDir`, or null when none runs there. */
export function runningDevSession(dataDir: string): DevSession | null {
  let session: DevSession
  try {
    session = JSON.parse(readFileSync(join(dataDir, SESSION_FILE), 'utf8')) as DevSession
  } catch {
    return null
  }
  return session.pid !== process.pid && isAlive(session.pid) && session.adminToken ? session : null
}

export function readDevSession(dataDir: string): DevSession {
  const session = runningDevSession(dataDir)
  if (!session) throw new Error(`no running paywatch dev found in ${dataDir}: start \`npx paywatch dev\` first (same PAYWATCH_DATA_DIR)`)
  return session
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
