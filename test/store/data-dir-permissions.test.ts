// The embedded data folder is its owner's only (docs/operations.md, "Data directory permissions"): a new
// one is created 0700 with every file 0600 (PGlite writes 0666), and a folder open to group or others
// stops the start with one line naming it and the chmod to run, as PostgreSQL refuses such a data
// directory. `paywatch serve` says it in that one line.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, test } from 'node:test'
import { DataDirPermissionsError } from '../../src/store/infrastructure/data-dir-permissions.ts'
import { openDatabase } from '../../src/store/infrastructure/database.ts'
import { migrate } from '../../src/store/infrastructure/migrate.ts'
import { seedEmbeddedDataDir } from '../support/pglite-template.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const parent = mkdtempSync(join(tmpdir(), 'paywatch-perms-'))
after(() => rmSync(parent, { recursive: true, force: true }))

/** Every path under `dir` whose mode lets group or others in. */
function openToOthers(dir: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name)
    if (statSync(path).mode & 0o077) found.push(`${path} ${(statSync(path).mode & 0o777).toString(8)}`)
  }
  return found
}

const mode = (path: string) => statSync(path).mode & 0o777

test('a new data folder is created 0700 and every file in it is 0600', async () => {
  // A path that does not exist yet, two levels deep: `npm start` on a fresh clone creates ./data like this.
  const dataDir = join(parent, 'fresh', 'data')
  const handle = await openDatabase({ databaseUrl: null, dataDir })
  try {
    await migrate(handle.db)
    await handle.db.insertInto('accounts').values({ id: 'a1', name: 'perms', created_at: new Date() }).execute()
  } finally {
    await handle.close()
  }
  assert.equal(mode(dataDir), 0o700)
  assert.equal(mode(join(parent, 'fresh')), 0o700, 'a parent it created too')
  assert.deepEqual(openToOthers(dataDir), [])
})

test('a copied cluster with 0666 files (as PGlite writes them) is restricted when opened', async () => {
  const dataDir = join(parent, 'seeded')
  await seedEmbeddedDataDir(dataDir)
  chmodSync(join(dataDir, 'pglite', 'PG_VERSION'), 0o666)
  assert.notDeepEqual(openToOthers(dataDir), [], 'the copy starts open')
  const handle = await openDatabase({ databaseUrl: null, dataDir })
  await handle.close()
  assert.deepEqual(openToOthers(dataDir), [])
})

test('a data folder open to group or others is refused with one line naming it and the chmod to run', async () => {
  for (const open of [0o755, 0o770, 0o707, 0o750]) {
    const dataDir = join(parent, `open-${open.toString(8)}`)
    mkdirSync(dataDir)
    chmodSync(dataDir, open)
    await assert.rejects(openDatabase({ databaseUrl: null, dataDir }), (error: Error) => {
      assert.ok(error instanceof DataDirPermissionsError, String(error))
      assert.match(error.message, new RegExp(`chmod 700 ${dataDir}$`))
      assert.ok(error.message.includes(`mode 0${open.toString(8)}`), error.message)
      assert.doesNotMatch(error.message, /\n/)
      return true
    })
    assert.deepEqual(readdirSync(dataDir), [], 'nothing was written into it')
  }
})

test('paywatch serve on such a folder stops with that one line', async () => {
  const dataDir = join(parent, 'serve-open')
  mkdirSync(dataDir, { mode: 0o755 })
  chmodSync(dataDir, 0o755)
  const child = spawn(join(root, 'node_modules', '.bin', 'node'), [join(root, 'src', 'cli', 'main.ts'), 'serve'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PAYWATCH_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  const lines = output.split('\n').filter((line) => line.trim() !== '' && !/ExperimentalWarning|--trace-warnings/.test(line))
  assert.equal(code, 1, output)
  assert.equal(lines.length, 1, output)
  assert.match(lines[0]!, new RegExp(`${dataDir}.*run chmod 700 ${dataDir}$`))
})
