import { randomBytes } from 'node:crypto'
import { linkSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { NonRetryableError } from '../../common/errors.ts'

/** Another process holds the embedded data folder: its one line names the folder and that process. */
export class DataDirLockedError extends NonRetryableError {
  override name = 'DataDirLockedError'
  override readonly code = 'DATA_DIR_LOCKED'
  readonly dataDir: string
  readonly pid: number
  constructor(dataDir: string, pid: number) {
    super(
      pid > 0
        ? `data directory ${dataDir} is in use by paywatch process ${pid}; stop it first, or use its admin API while it runs`
        : `data directory ${dataDir} is being locked by another paywatch process starting on it; stop it first`,
    )
    this.dataDir = dataDir
    this.pid = pid
  }
}

export interface DataDirLock {
  release(): void
}

const LOCK_FILE = 'paywatch.pid'
/** Held only for the moment of a takeover: one process at a time checks, removes and replaces a stale lock. */
const TAKEOVER_FILE = 'paywatch.pid.takeover'
/** An empty lock file this young is being written by an opener (an earlier version wrote it in two steps). */
const BEING_WRITTEN_MS = 5_000
/** Folders this process holds: a lock file naming our own pid but absent here is a previous life's (a container's pid 1). */
const heldHere = new Set<string>()

/**
 * The embedded database (PGlite) is one process's: two processes writing one folder lose writes or
 * crash (`Aborted()`). The opener writes its pid into a file of its own and links it as `paywatch.pid`
 * (a link fails when the name exists, and the file it names is complete from the start: there is no
 * moment where it exists empty); any other opener reads it and stops while that process lives. A lock
 * left by a killed process (kill -9, power loss) names a pid that no longer runs and is taken over, by
 * one process at a time: the check, the removal and the new link happen while holding
 * `paywatch.pid.takeover` (itself linked the same way), so that of two processes taking over at once
 * exactly one wins and the other finds the winner alive.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE)
  if (heldHere.has(path)) throw new DataDirLockedError(dataDir, process.pid)
  const content = `${process.pid}\n${bootId()}\n`
  for (let attempt = 0; attempt < 200; attempt++) {
    if (linkComplete(path, content)) return held(path)
    const holder = holderOf(path)
    if (holder !== null && holder !== process.pid && isAlive(holder)) throw new DataDirLockedError(dataDir, holder)
    if (beingWritten(path)) {
      if (attempt >= 20) throw new DataDirLockedError(dataDir, 0)
      pause(25)
      continue
    }
    // Stale: taken over under the takeover lock, or wait for the process taking it over now.
    const takeover = join(dataDir, TAKEOVER_FILE)
    if (!linkComplete(takeover, content)) {
      const taker = holderOf(takeover)
      // A taker that died in the middle of a takeover (a moment's window) leaves its file: removed.
      if (taker === null || (taker !== process.pid && !isAlive(taker))) rmSync(takeover, { force: true })
      else pause(5)
      continue
    }
    try {
      // Still the stale lock seen above (not one a process that took over just before us linked)?
      const now = holderOf(path)
      if (now === holder && !(now !== null && now !== process.pid && isAlive(now))) {
        rmSync(path, { force: true })
        if (linkComplete(path, content)) return held(path)
      }
    } finally {
      rmSync(takeover, { force: true })
    }
  }
  throw new DataDirLockedError(dataDir, holderOf(path) ?? 0)
}

function held(path: string): DataDirLock {
  heldHere.add(path)
  return {
    release() {
      if (!heldHere.delete(path)) return
      if (holderOf(path) === process.pid) rmSync(path, { force: true })
    },
  }
}

/**
 * Creates `path` with `content`, complete, only if no file has that name: written to a file of this
 * process first, then linked (atomic, and fails with EEXIST when the name is taken). False when taken.
 */
function linkComplete(path: string, content: string): boolean {
  const draft = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`
  writeFileSync(draft, content, { flag: 'wx' })
  try {
    linkSync(draft, path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    rmSync(draft, { force: true })
  }
}

/** An empty lock file written a moment ago: its opener is still writing it (not stale). */
function beingWritten(path: string): boolean {
  try {
    const stat = statSync(path)
    return stat.size === 0 && Date.now() - stat.mtimeMs < BEING_WRITTEN_MS
  } catch {
    return false
  }
}

/** A synchronous pause (the lock is taken before anything else starts). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
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
