// A fresh embedded database costs an initdb (~5 s on two cores); every test file needs one. The
// initdb output is made once, kept in test/.cache/ keyed by the PGlite version, and copied into
// each test's data folder (~0.3 s). PGlite opens an existing cluster without running initdb.
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PGlite } from '@electric-sql/pglite'

const require = createRequire(import.meta.url)
const cacheDir = join(dirname(fileURLToPath(import.meta.url)), '..', '.cache')

function pgliteVersion(): string {
  const packageJson = join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json')
  return (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version
}

let template: Promise<string> | undefined

/** The cached empty cluster, made on first use (atomically: several test processes may race). */
function templateDir(): Promise<string> {
  template ??= (async () => {
    const dir = join(cacheDir, `pglite-${pgliteVersion()}`)
    if (existsSync(join(dir, 'PG_VERSION'))) return dir
    mkdirSync(cacheDir, { recursive: true })
    const building = `${dir}.${process.pid}.tmp`
    rmSync(building, { recursive: true, force: true })
    const pglite = await PGlite.create(building)
    await pglite.close()
    try {
      renameSync(building, dir)
    } catch {
      // Another process finished first: use its copy.
      rmSync(building, { recursive: true, force: true })
    }
    return dir
  })()
  return template
}

/**
 * Puts an empty, initialised embedded cluster where `openDatabase({ dataDir })` looks for it
 * (`<dataDir>/pglite`), so the service starts without an initdb.
 */
export async function seedEmbeddedDataDir(dataDir: string): Promise<void> {
  const target = join(dataDir, 'pglite')
  if (existsSync(target)) return
  // Owner-only, as the service demands of a data folder (src/store/infrastructure/data-dir-permissions.ts); the copied
  // files keep PGlite's 0666 until the service opens them and restricts them.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  cpSync(await templateDir(), target, { recursive: true })
}
