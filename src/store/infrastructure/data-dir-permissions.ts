import { chmodSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { isMainThread } from 'node:worker_threads'
import { NonRetryableError } from '../../common/errors.ts'

/**
 * The embedded data folder holds the database: API-key and session hashes, signing keys (in clear
 * without PAYWATCH_SECRETS_KEY). Only its owner may enter it, as PostgreSQL demands of its data
 * directory: the one line names the folder and the command that fixes it.
 */
export class DataDirPermissionsError extends NonRetryableError {
  override name = 'DataDirPermissionsError'
  override readonly code = 'DATA_DIR_PERMISSIONS'
  readonly dataDir: string
  constructor(dataDir: string, mode: number) {
    super(
      `data directory ${dataDir} is open to group or others (mode ${mode.toString(8).padStart(4, '0')}); ` +
        `only its owner may read it: run chmod 700 ${dataDir}`,
    )
    this.dataDir = dataDir
  }
}

/** POSIX permissions mean nothing on Windows (Node reports 0666/0777 there). */
const checked = process.platform !== 'win32'

/**
 * Creates the data folder owner-only (0700) when it does not exist yet, with any missing parent; an
 * existing folder that group or others may read, write or enter is refused (DataDirPermissionsError).
 * The process's umask becomes 077 from here on, so what PostgreSQL's files and folders this process
 * creates later are its owner's only too.
 */
export function prepareDataDir(dataDir: string): void {
  if (!existsSync(dataDir)) mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  if (!checked) return
  if (isMainThread) process.umask(0o077) // a worker thread may not set it (the main thread's applies)
  const mode = statSync(dataDir).mode & 0o777
  if (mode & 0o077) throw new DataDirPermissionsError(dataDir, mode)
}

/**
 * Every file under `dir` 0600 and every folder 0700. PGlite writes its files 0666 whatever the umask
 * (its file system layer passes the mode through), and a copied cluster keeps the modes it had: the
 * owner-only data folder already keeps others out, this keeps them out of each file as well.
 */
export function restrictToOwner(dir: string): void {
  if (!checked || !existsSync(dir)) return
  chmodSync(dir, 0o700)
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) restrictToOwner(path)
    else if (entry.isFile()) chmodSync(path, 0o600)
  }
}
