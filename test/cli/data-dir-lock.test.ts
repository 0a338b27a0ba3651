// One embedded data directory, one process (docs/operations.md "One data directory, one process"):
// a second serve or dev on it stops with one line naming the folder and the running pid, a CLI
// command refuses the same way while the service runs, a lock left by kill -9 does not block the
// next start, and `paywatch dev` starts from an empty database each time.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, test } from 'node:test'
import { seedEmbeddedDataDir } from '../support/pglite-template.ts'
import { freePort, waitUntil } from '../support/ports.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const node = join(root, 'node_modules', '.bin', 'node')
const main = join(root, 'src', 'cli', 'main.ts')
// The lock concerns the embedded database only: PostgreSQL serves any number of nodes.
const skip = process.env.DATABASE_URL ? 'the data directory lock is for the embedded database only' : false

interface Started {
  child: ChildProcess
  output: () => string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

function start(args: string[], env: Record<string, string>): Started {
  const child = spawn(node, [main, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  )
  return { child, output: () => output, exited }
}

async function finished(started: Started): Promise<{ code: number | null; lines: string[] }> {
  const { code } = await started.exited
  const lines = started
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '' && !/ExperimentalWarning|--trace-warnings/.test(line))
  return { code, lines }
}

async function serving(env: Record<string, string>): Promise<Started & { port: number }> {
  const port = await freePort()
  const started = start(['serve'], { ...env, PORT: String(port) })
  await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200, 60_000, started.output)
  return { ...started, port }
}

let dataDir: string
let env: Record<string, string>
const running: ChildProcess[] = []
before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'paywatch-lock-'))
  await seedEmbeddedDataDir(dataDir)
  env = { PAYWATCH_DATA_DIR: dataDir }
})
after(() => {
  for (const child of running) child.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

test('a second serve and a CLI command on a running data directory stop with one line; kill -9 leaves no blocking lock', {
  skip,
}, async () => {
  const first = await serving(env)
  running.push(first.child)
  assert.equal(readFileSync(join(dataDir, 'paywatch.pid'), 'utf8').split('\n')[0], String(first.child.pid))

  const [second, cli] = await Promise.all([
    finished(start(['serve'], { ...env, PORT: String(await freePort()) })),
    finished(start(['accounts', 'create', 'lost?'], env)),
  ])
  for (const refused of [second, cli]) {
    assert.equal(refused.code, 1)
    assert.equal(refused.lines.length, 1, refused.lines.join('\n'))
    assert.ok(refused.lines[0]!.includes(dataDir), refused.lines[0])
    assert.match(refused.lines[0]!, new RegExp(`process ${first.child.pid}\\b`))
  }
  assert.equal((await fetch(`http://127.0.0.1:${first.port}/healthz`)).status, 200, 'the first one runs on')

  first.child.kill('SIGKILL')
  await first.exited
  assert.ok(existsSync(join(dataDir, 'paywatch.pid')), 'kill -9 leaves the lock file behind')
  const created = await finished(start(['accounts', 'create', 'after the crash'], env))
  assert.equal(created.code, 0, created.lines.join('\n'))
  const restarted = await serving(env)
  running.push(restarted.child)
  const listed = await finished(start(['accounts', 'list'], env))
  assert.equal(listed.code, 1, 'refused again while the restarted service runs')
  restarted.child.kill('SIGTERM')
  assert.deepEqual(await restarted.exited, { code: 0, signal: null })
  assert.equal(existsSync(join(dataDir, 'paywatch.pid')), false, 'a graceful stop removes the lock')
  const after = await finished(start(['accounts', 'list'], env))
  assert.equal(after.code, 0)
  assert.match(after.lines.join('\n'), /after the crash/, 'what the CLI wrote is there')
})

test('paywatch dev: a second dev on the folder stops with one line; each dev starts from an empty database and tracks at once', {
  skip,
}, async () => {
  const devEnv = { ...env, PORT: '0' }
  const devDir = join(dataDir, 'dev')
  const runDev = async () => {
    const started = start(['dev', '--anvil-port', String(await freePort())], devEnv)
    running.push(started.child)
    await waitUntil(async () => /API key/.test(started.output()), 120_000, started.output)
    return started
  }
  const first = await runDev()
  const second = await finished(start(['dev', '--anvil-port', String(await freePort())], devEnv))
  assert.equal(second.code, 1)
  assert.equal(second.lines.length, 1, second.lines.join('\n'))
  assert.ok(second.lines[0]!.includes(devDir) && second.lines[0]!.includes(`process ${first.child.pid}`), second.lines[0])
  const firstAccount = /account id : (\S+)/.exec(first.output())![1]
  first.child.kill('SIGTERM')
  assert.equal((await first.exited).code, 0, first.output())

  const again = await runDev()
  const accounts = await fetch(`${/API (http\S+),/.exec(again.output())![1]}/admin/accounts`, {
    headers: { authorization: `Bearer ${/admin token: (\S+)/.exec(again.output())![1]}` },
  })
  const listed = (await accounts.json()) as { id: string }[]
  assert.deepEqual(
    listed.map((a) => a.id),
    [/account id : (\S+)/.exec(again.output())![1]],
    'only the dev account, put back with the same id',
  )
  assert.equal(/account id : (\S+)/.exec(again.output())![1], firstAccount, 'dev keeps its account across restarts')
  // The second dev in a row tracks at once: a payment on its new chain is judged (its callback, to no
  // receiver, fails; the command reports that attempt).
  const paid = await finished(start(['dev', 'pay', '--amount', '0.02'], devEnv))
  assert.equal(paid.code, 0, paid.lines.join('\n'))
  assert.match(paid.lines.join('\n'), /payment success after/)
  // Without a nonce or sender: found by receiver, and the record then names both.
  const traced = await finished(start(['dev', 'pay', '--amount', '0.03', '--no-nonce'], devEnv))
  assert.equal(traced.code, 0, traced.lines.join('\n'))
  assert.match(traced.lines.join('\n'), /payment success after/)
  assert.match(traced.lines.join('\n'), /record: transaction 0x[0-9a-f]{64}, sender 0x[0-9a-fA-F]{40}, nonce \d+, deadline none/)
  again.child.kill('SIGTERM')
  assert.equal((await again.exited).code, 0, again.output())
})
