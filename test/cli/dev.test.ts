// `paywatch dev` (docs/operations.md, "paywatch dev"): the same signing key, account and API key after a
// restart on a fresh chain; `dev pay` with ETH, DUSD (--token), an underpayment and a reorg; the lines it
// logs when stopped; CLI commands beside it go through it or are refused naming its folder; and stopping
// the `npx paywatch dev` process (or killing its launcher) leaves no service or Anvil behind.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, test } from 'node:test'
import { verifyCallback } from '@paywatch/client'
import { DEV_TOKEN_BYTECODE } from '../../src/cli/dev-token.ts'
import { getArtifact } from '../support/compile.ts'
import { createFreshDatabaseUrl, dropDatabase } from '../support/database.ts'
import { seedEmbeddedDataDir } from '../support/pglite-template.ts'
import { freePort, waitUntil } from '../support/ports.ts'
import { startReceiver } from '../callbacks/support.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const node = join(root, 'node_modules', '.bin', 'node')
const main = join(root, 'src', 'cli', 'main.ts')
const embeddedOnly = process.env.DATABASE_URL ? 'the embedded database is the one a folder holds' : false
const folders: string[] = []
const running: ChildProcess[] = []
after(() => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL')
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

interface Started {
  child: ChildProcess
  output: () => string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

function start(command: string, args: string[], env: Record<string, string>, cwd = root): Started {
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.push(child)
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  )
  return { child, output: () => output, exited }
}

async function finished(started: Started): Promise<{ code: number | null; output: string }> {
  const { code } = await started.exited
  return { code, output: started.output() }
}

interface Banner {
  api: string
  apiKey: string
  accountId: string
  adminToken: string
  dashboard: string
  token: string
}

async function startDev(env: Record<string, string>, command = node, prefix = [main]): Promise<Started & { banner: Banner }> {
  const started = start(command, [...prefix, 'dev', '--anvil-port', String(await freePort())], env)
  await waitUntil(async () => /dashboard\s*:/.test(started.output()), 120_000, started.output)
  const field = (pattern: RegExp) => pattern.exec(started.output())?.[1] ?? assert.fail(`${pattern} in ${started.output()}`)
  const banner = {
    api: field(/API (http\S+),/),
    apiKey: field(/API key\s*: (\S+)/),
    accountId: field(/account id : (\S+)/),
    adminToken: field(/admin token: (\S+)/),
    dashboard: field(/dashboard\s*: (\S+)/),
    token: field(/DUSD \(ERC-20, 6 decimals\) at (0x[0-9a-fA-F]{40})/),
  }
  return { ...started, banner }
}

const publicKeyOf = async (api: string) => (await fetch(`${api}/v2/public-key`)).text()

test('dev keeps its signing key, account and API key across restarts on a fresh chain; dev pay with --token, --underpay and --reorg; stop lines', {
  timeout: 600_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'paywatch-dev-'))
  folders.push(dataDir)
  const databaseUrl = await createFreshDatabaseUrl()
  if (!databaseUrl) await seedEmbeddedDataDir(join(dataDir, 'dev'))
  const env = { PAYWATCH_DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  const receiver = await startReceiver()
  try {
    const first = await startDev(env)
    assert.equal(first.banner.dashboard, `${first.banner.api}/dashboard`)
    const publicKey = await publicKeyOf(first.banner.api)
    const paid = await finished(start(node, [main, 'dev', 'pay', '--token', '--amount', '2.5', '--callback', receiver.url], env))
    assert.equal(paid.code, 0, paid.output)
    assert.match(paid.output, /registered: 2\.5 DUSD/)
    assert.match(paid.output, /payment success after/)
    assert.match(paid.output, /answered 200/)
    const [callback] = await receiver.waitFor(1)
    const record = JSON.parse(callback!.body) as { token: string; amount: string; secret_id: string }
    assert.deepEqual([record.token, record.amount], [first.banner.token, '2.5'])
    assert.equal(await verifyCallback({ body: callback!.body, signature: String(callback!.headers['x-signature']), publicKey }), true)

    first.child.kill('SIGTERM')
    const stopped = await finished(first)
    assert.equal(stopped.code, 0, stopped.output)
    assert.match(stopped.output, /paywatch dev: SIGTERM received; stopping the service, then Anvil\n/)
    assert.match(stopped.output, /paywatch dev: stopped \(service and Anvil\)\n/)

    const second = await startDev(env)
    assert.deepEqual(
      [second.banner.apiKey, second.banner.accountId, second.banner.token],
      [first.banner.apiKey, first.banner.accountId, first.banner.token],
    )
    assert.equal(await publicKeyOf(second.banner.api), publicKey, 'the same callback-signing key')
    // The API key works on the new chain; the first chain's payment is gone with it (embedded database).
    const old = await fetch(`${second.banner.api}/v2/payments/${record.secret_id}`, { headers: { 'x-api-key': second.banner.apiKey } })
    assert.equal(old.status, databaseUrl ? 200 : 404)

    // On PostgreSQL dev's database outlives its chain: the first chain's payment (payer nonce 0) is still
    // tracked and a new one at nonce 0 would be 409 (docs/operations.md, "paywatch dev").
    if (!databaseUrl) {
      const underpaid = await finished(start(node, [main, 'dev', 'pay', '--underpay', '--callback', receiver.url], env))
      assert.equal(underpaid.code, 0, underpaid.output)
      assert.match(underpaid.output, /0\.005 ETH \(underpaid: 0\.01 expected\)/)
      assert.match(underpaid.output, /payment failed \(\w+\)/)
      assert.match(underpaid.output, /callback to \S+: answered 200/)
      // Without a nonce the underpayment is passed over; the deadline fails it (it used to wait for ever).
      const nonceless = await finished(start(node, [main, 'dev', 'pay', '--no-nonce', '--underpay', '--callback', receiver.url], env))
      assert.equal(nonceless.code, 0, nonceless.output)
      assert.match(nonceless.output, /underpayment is passed over/)
      assert.match(nonceless.output, /payment failed \(TRACKING_TIMED_OUT\)/)
      assert.match(nonceless.output, /callback to \S+: answered 200/)
      const reorged = await finished(start(node, [main, 'dev', 'pay', '--reorg', '--callback', receiver.url], env))
      assert.equal(reorged.code, 0, reorged.output)
      assert.match(reorged.output, /reorg: block \d+ replaced by an empty one; transaction 0x[0-9a-f]{64} is no longer on the chain/)
      assert.match(reorged.output, /payment pending: its transaction was removed by the reorg/)
      assert.match(second.output(), /chain reorganized/, 'the service walked back the replaced block')
    }
    second.child.kill('SIGINT')
    const again = await finished(second)
    assert.equal(again.code, 0, again.output)
    assert.match(again.output, /paywatch dev: SIGINT received/)
    assert.match(again.output, /paywatch dev: stopped/)
  } finally {
    await receiver.close()
    if (databaseUrl) await dropDatabase(databaseUrl)
  }
})

test('CLI commands beside a running dev: accounts and keys through its admin API, others refused naming its folder', {
  skip: embeddedOnly,
  timeout: 300_000,
}, async () => {
  // A project folder whose `data` dev runs on, as `npx paywatch dev` in it does by default.
  const project = mkdtempSync(join(tmpdir(), 'paywatch-dev-cli-'))
  folders.push(project)
  const dataDir = join(project, 'data')
  await seedEmbeddedDataDir(join(dataDir, 'dev'))
  const env = { PAYWATCH_DATA_DIR: dataDir }
  const dev = await startDev(env)
  const [created, refused] = await Promise.all([
    finished(start(node, [main, 'accounts', 'create', 'test'], env)),
    finished(start(node, [main, 'migrate'], env)),
  ])
  assert.equal(created.code, 0, created.output)
  const account = JSON.parse(created.output) as { id: string; name: string }
  assert.equal(account.name, 'test')
  const listed = await fetch(`${dev.banner.api}/admin/accounts`, { headers: { authorization: `Bearer ${dev.banner.adminToken}` } })
  assert.deepEqual(((await listed.json()) as { name: string }[]).map((a) => a.name).sort(), ['dev', 'test'], 'in dev’s database')
  const key = await finished(start(node, [main, 'keys', 'create', account.id], env))
  assert.equal(key.code, 0, key.output)
  const apiKey = (JSON.parse(key.output) as { key: string }).key
  assert.equal(
    (await fetch(`${dev.banner.api}/v2/payments/none`, { headers: { 'x-api-key': apiKey } })).status,
    404,
    'the key works on dev',
  )

  assert.equal(refused.code, 1)
  const line = refused.output.trim()
  assert.equal(line.split('\n').length, 1, line)
  assert.ok(line.includes(join(dataDir, 'dev')) && line.includes(`process ${dev.child.pid}`), line)
  assert.match(line, new RegExp(`would use ${dataDir}, which dev does not read`))
  assert.equal(existsSync(join(dataDir, 'pglite')), false, 'nothing written in the folder dev does not read')

  // From a subfolder of the project, with the default `./data` (which names a folder of its own there).
  const subfolder = join(project, 'packages', 'client')
  mkdirSync(subfolder, { recursive: true })
  const [listed2, refused2] = await Promise.all([
    finished(start(node, [main, 'accounts', 'list'], {}, subfolder)),
    finished(start(node, [main, 'migrate'], {}, subfolder)),
  ])
  assert.equal(listed2.code, 0, listed2.output)
  assert.deepEqual((JSON.parse(listed2.output) as { name: string }[]).map((a) => a.name).sort(), ['dev', 'test'], 'dev’s accounts')
  assert.equal(refused2.code, 1)
  assert.match(
    refused2.output,
    new RegExp(`running with its data in ${join(dataDir, 'dev')}; this command would use ${join(subfolder, 'data')}`),
  )
  assert.equal(existsSync(join(subfolder, 'data')), false, 'no folder of its own made in the subfolder')
  dev.child.kill('SIGTERM')
  assert.equal((await dev.exited).code, 0)
  const afterwards = await finished(start(node, [main, 'accounts', 'list'], env))
  assert.equal(afterwards.code, 0, 'dev stopped: the command works on its own folder again')
})

/** Pids of the Anvil listening on `port` (its command line names the port). */
function anvilsOn(port: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
        return args[0]!.endsWith('/anvil') && args[args.indexOf('--port') + 1] === port
      } catch {
        return false
      }
    })
    .map(Number)
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

for (const way of ['SIGTERM to the npx process', 'SIGKILL to the bin/paywatch.js launcher'] as const) {
  test(`stopping dev leaves no service or Anvil behind: ${way}`, { skip: embeddedOnly, timeout: 300_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paywatch-dev-stop-'))
    folders.push(dataDir)
    await seedEmbeddedDataDir(join(dataDir, 'dev'))
    const env = { PAYWATCH_DATA_DIR: dataDir }
    const dev =
      way === 'SIGTERM to the npx process'
        ? await startDev(env, 'npx', ['--no-install', 'paywatch'])
        : await startDev(env, join(root, 'bin', 'paywatch.js'), [])
    const service = (JSON.parse(readFileSync(join(dataDir, 'dev', 'dev-session.json'), 'utf8')) as { pid: number }).pid
    const port = /Anvil at http:\/\/127\.0\.0\.1:(\d+)/.exec(dev.output())![1]!
    const anvils = anvilsOn(port)
    assert.notEqual(service, dev.child.pid, 'the service runs in a child of the started process')
    assert.equal(anvils.length, 1)
    assert.ok(alive(service))

    dev.child.kill(way === 'SIGTERM to the npx process' ? 'SIGTERM' : 'SIGKILL')
    await waitUntil(async () => !alive(service) && !anvils.some(alive), 60_000, dev.output)
    assert.match(dev.output(), /paywatch dev: SIGTERM received; stopping the service, then Anvil/)
    assert.match(dev.output(), /paywatch dev: stopped \(service and Anvil\)/)
  })
}

test("dev's DUSD is test/support/contracts/TestToken.sol as the tests compile it", async () => {
  assert.equal(DEV_TOKEN_BYTECODE, (await getArtifact('TestToken')).bytecode)
})
