import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { NonRetryableError } from '../common/errors.ts'

/** Another process holds the embedded data folder: its one line names the folder and that process. */
export class DataDirLockedError extends NonRetryableError {
  override name = 'DataDirLockedError'
  override readonly code = 'DATA_DIR_LOCKED'
  readonly dataDir: string
  readonly pid: number
  constructor(dataDir: string, pid: number) {
    super(`data directory ${dataDir} is in use by paywatch process ${pid}; stop it first, or use its admin API while it runs`)
    this.dataDir = dataDir
    this.pid = pid
  }
}

export interface DataDirLock {
  release(): void
}

const LOCK_FILE = 'paywatch.pid'
/** Folders this process holds: a lock file naming our own pid but absent here is a previous life's (a container's pid 1). */
const heldHere = new Set<string>()

/**
 * The embedded database (PGlite) is one process's: two processes writing one folder lose writes or
 * crash (`Aborted()`). The first opener writes its pid into `paywatch.pid` with an exclusive create;
 * any other opener reads it and stops while that process lives. A lock left by a killed process
 * (kill -9, power loss) names a pid that no longer runs and is taken over.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE)
  if (heldHere.has(path)) throw new DataDirLockedError(dataDir, process.pid)
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number
    try {
      fd = openSync(path, 'wx')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = holderOf(path)
      if (holder !== null && holder !== process.pid && isAlive(holder)) throw new DataDirLockedError(dataDir, holder)
      // Stale (or still being written by an opener that died mid-write): remove it and try again.
      rmSync(path, { force: true })
      continue
    }
    writeSync(fd, `${process.pid}\n${bootId()}\n`)
    closeSync(fd)
    heldHere.add(path)
    return {
      release() {
        if (!heldHere.delete(path)) return
        if (holderOf(path) === process.pid) rmSync(path, { force: true })
      },
    }
  }
  throw new DataDirLockedError(dataDir, holderOf(path) ?? 0)
}

/** Throws `DataDirLockedError` when another living process holds the folder (a check before slow start-up work). */
export function assertDataDirFree(dataDir: string): void {
  const path = join(dataDir, LOCK_FILE)
  const holder = holderOf(path)
  if (heldHere.has(path)) throw new DataDirLockedError(dataDir, process.pid)
  if (holder !== null && holder !== process.pid && isAlive(holder)) throw new DataDirLockedError(dataDir, holder)
}

/**
 * The pid in the lock file, or null when there is none or it was written before the last reboot (Linux's
 * boot id differs): after a reboot the same pid may well belong to another program.
 */
function holderOf(path: string): number | null {
  try {
    const [pidLine, bootLine] = readFileSync(path, 'utf8').split('\n')
    const pid = Number.parseInt(pidLine!.trim(), 10)
    if (bootLine?.trim() && bootId() && bootLine.trim() !== bootId()) return null
    return Number.isInteger(pid) && pid > 0 ? pid : null
  } catch {
    return null
  }
}

let currentBootId: string | undefined
/** Linux's id of this boot; empty elsewhere (then only the pid is compared). */
function bootId(): string {
  if (currentBootId === undefined) {
    try {
      currentBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    } catch {
      currentBootId = ''
    }
  }
  return currentBootId
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
