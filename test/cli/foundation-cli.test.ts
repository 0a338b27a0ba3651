// The operator's side (docs/api.md §1): `npx paywatch --help`, accounts and keys without
// HTTP, a bad configuration value stopping `serve` with one line, and a graceful SIGTERM.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { openDatabase } from '../../src/store/infrastructure/database.ts'
import { authenticateApiKey } from '../../src/store/api-keys.ts'
import { createFreshDatabaseUrl, dropDatabase } from '../support/database.ts'
import { seedEmbeddedDataDir } from '../support/pglite-template.ts'
import { freePort, waitUntil } from '../support/ports.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const node = join(root, 'node_modules', '.bin', 'node')
const main = join(root, 'src', 'cli', 'main.ts')

interface Run {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs a command to its end with exactly the given environment (plus PATH and HOME). */
function run(command: string, args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

const paywatch = (args: string[], env: Record<string, string>) => run(node, [main, ...args], env)

let dataDir: string
let databaseUrl: string | null
let env: Record<string, string>
before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'paywatch-cli-'))
  databaseUrl = await createFreshDatabaseUrl()
  if (!databaseUrl) await seedEmbeddedDataDir(dataDir)
  env = { PAYWATCH_DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
})
after(async () => {
  if (databaseUrl) await dropDatabase(databaseUrl)
  rmSync(dataDir, { recursive: true, force: true })
})

// Processes that need no database run side by side: each start of the CLI costs seconds on a busy machine.
test('npx paywatch --help lists the commands; a bad configuration value stops serve with one line naming it', async () => {
  const bad = [
    ['PORT', 'eighty'],
    ['PAYWATCH_RATE_RPS', '-3'],
    ['DATABASE_URL', 'mysql://db'],
  ] as const
  const [help, keysHelp, ...refused] = await Promise.all([
    run('npx', ['--no-install', 'paywatch', '--help'], {}),
    paywatch(['keys', '--help'], env),
    ...bad.map(([name, value]) => paywatch(['serve'], { ...env, [name]: value })),
  ])
  assert.equal(help!.code, 0, help!.stderr)
  for (const command of ['serve', 'migrate', 'accounts', 'keys', 'dev']) {
    assert.match(help!.stdout, new RegExp(`^\\s+${command}\\b`, 'm'), `${command} listed`)
  }
  assert.equal(keysHelp!.code, 0)
  for (const sub of ['create', 'list', 'revoke']) assert.match(keysHelp!.stdout, new RegExp(`\\b${sub}\\b`))

  for (const [i, [name]] of bad.entries()) {
    const result = refused[i]!
    assert.notEqual(result.code, 0)
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '' && !/ExperimentalWarning|--trace-warnings/.test(line))
    assert.equal(lines.length, 1, result.stderr)
    assert.match(lines[0]!, new RegExp(name))
    assert.equal(result.stdout, '')
  }
})

describe('accounts and keys without HTTP', () => {
  test('create an account and a key, list, revoke; the key authenticates until revoked', async () => {
    const migrated = await paywatch(['migrate'], env)
    assert.equal(migrated.code, 0, migrated.stderr)

    const created = await paywatch(['accounts', 'create', 'CLI shop'], env)
    assert.equal(created.code, 0, created.stderr)
    const account = JSON.parse(created.stdout) as { id: string; name: string }
    assert.equal(account.name, 'CLI shop')

    const keyRun = await paywatch(['keys', 'create', account.id], env)
    assert.equal(keyRun.code, 0, keyRun.stderr)
    const key = JSON.parse(keyRun.stdout) as { id: string; key: string }
    assert.match(key.key, /^pw_/)

    const listed = JSON.parse((await paywatch(['accounts', 'list'], env)).stdout) as { id: string }[]
    assert.ok(listed.some((a) => a.id === account.id))
    const unknown = await paywatch(['keys', 'create', 'no-such-account'], env)
    assert.notEqual(unknown.code, 0)
    assert.match(unknown.stderr, /no-such-account/)
    const unknownList = await paywatch(['keys', 'list', 'no-such-account'], env)
    assert.notEqual(unknownList.code, 0)
    assert.match(unknownList.stderr, /account no-such-account not found/)

    const keys = JSON.parse((await paywatch(['keys', 'list', account.id], env)).stdout) as {
      id: string
      prefix: string
      revoked: boolean
    }[]
    assert.deepEqual(
      keys.map((k) => ({ id: k.id, revoked: k.revoked })),
      [{ id: key.id, revoked: false }],
    )
    assert.equal(JSON.stringify(keys).includes(key.key), false, 'a listing never shows the key')

    assert.deepEqual(await authenticate(key.key), { keyId: key.id, accountId: account.id })
    const revoked = await paywatch(['keys', 'revoke', key.id], env)
    assert.equal(revoked.code, 0, revoked.stderr)
    assert.equal(await authenticate(key.key), undefined)
  })
})

async function authenticate(key: string) {
  const handle = await openDatabase({ databaseUrl, dataDir })
  try {
    return await authenticateApiKey(handle.db, key)
  } finally {
    await handle.close()
  }
}

describe('serve', () => {
  test('SIGTERM: a running service stops promptly with exit code 0', async () => {
    const port = await freePort()
    const child = spawn(node, [main, 'serve'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    )
    try {
      await waitUntil(
        async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200,
        30_000,
        () => output,
      )
      const started = Date.now()
      child.kill('SIGTERM')
      const result = await Promise.race([exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 15_000))])
      assert.notEqual(result, 'timeout', `still running 15 s after SIGTERM: ${output}`)
      assert.deepEqual(result, { code: 0, signal: null }, output)
      assert.ok(Date.now() - started < 15_000)
      await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`))
    } finally {
      child.kill('SIGKILL')
    }
  })
})
