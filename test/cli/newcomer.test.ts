// What a newcomer meets first (docs/operations.md, CLI): `paywatch --version`, `migrate` naming what it
// applied, readable logs on a terminal and JSON lines otherwise, and problems that say what to set: the
// admin API without a token, a blockchain without RPC URLs.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { after, test } from 'node:test'
import { startTestService } from '../support/service.ts'
import { freePort } from '../support/ports.ts'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))
const node = join(root, 'node_modules', '.bin', 'node')
const main = join(root, 'src', 'cli', 'main.ts')
const dataDir = mkdtempSync(join(tmpdir(), 'paywatch-newcomer-'))
after(() => rmSync(dataDir, { recursive: true, force: true }))
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PAYWATCH_DATA_DIR: dataDir }

test('--version prints the package version', async () => {
  const { stdout } = await run(node, [main, '--version'], { env })
  assert.equal(stdout.trim(), JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version)
})

test('migrate names the migrations it applied, then says the database is up to date', async () => {
  // A fresh embedded database (this file's own folder) names every migration it applies.
  const migrateEnv = env
  const first = await run(node, [main, 'migrate'], { env: migrateEnv })
  assert.match(first.stdout, /^applied: 0001_/m)
  const second = await run(node, [main, 'migrate'], { env: migrateEnv })
  assert.equal(second.stdout.trim(), 'database is up to date')
})

test('logs: JSON lines when the output is not a terminal, readable lines on a terminal', { timeout: 60_000 }, async (t) => {
  const port = String(await freePort())
  const serveEnv = { ...env, PORT: port, PAYWATCH_DATA_DIR: join(dataDir, 'logs') }
  const piped = await startAndStop(node, [main, 'serve'], serveEnv)
  const firstLine = piped.split('\n').find((line) => line.trim().startsWith('{'))
  assert.ok(firstLine, piped)
  assert.equal(typeof JSON.parse(firstLine).level, 'number')
  // Started with the defaults: one warning per missing piece, naming the variable (docs/operations.md, "First start").
  const warnings = piped
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; setting?: string; msg: string })
    .filter((line) => line.setting)
  assert.deepEqual(
    warnings.map((line) => [line.level, line.setting]),
    [
      [40, 'PAYWATCH_RPC_<CHAIN>'],
      [40, 'PAYWATCH_ADMIN_TOKEN'],
    ],
  )
  assert.match(warnings[1]!.msg, /set PAYWATCH_ADMIN_TOKEN/)
  if (!existsSync('/usr/bin/script')) return t.skip('no `script` to give the service a terminal')
  // `script` runs the command on a pseudo-terminal, as a person's shell would.
  const command = `${node} ${main} serve`
  const tty = await startAndStop('/usr/bin/script', ['-qfec', command, '/dev/null'], serveEnv)
  assert.match(tty, /INFO/, tty)
  assert.doesNotMatch(tty, /^\{"level"/m)
})

async function startAndStop(command: string, args: string[], childEnv: Record<string, string>): Promise<string> {
  const { spawn } = await import('node:child_process')
  const child = spawn(command, args, { env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const deadline = Date.now() + 45_000
  while (!/listening|Server listening/i.test(output) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
  return output
}

test('problems say what to set: the admin API without a token, a chain without RPC URLs', async () => {
  const service = await startTestService({ env: { PAYWATCH_ADMIN_TOKEN: '' } })
  try {
    const admin = await service.app.inject({ method: 'GET', url: '/admin/accounts' })
    assert.equal(admin.statusCode, 404)
    assert.equal(admin.json().code, 'NOT_FOUND')
    assert.match(admin.json().detail, /PAYWATCH_ADMIN_TOKEN/)
    const { accountId } = await import('../../src/store/accounts.ts').then(async (accounts) => ({
      accountId: (await accounts.createAccount(service.database.db, 'newcomer')).id,
    }))
    const { key } = await import('../../src/store/api-keys.ts').then((keys) => keys.createApiKey(service.database.db, accountId))
    const payment = await service.api(key, {
      method: 'POST',
      url: '/v2/payments',
      payload: {
        blockchain: 'polygon',
        sender: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
        nonce: '0',
        after_block: '0',
        receiver: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        token: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
        amount: '1',
        secret_id: 'newcomer-1',
        callback: 'https://shop.example/cb',
      },
    })
    assert.equal(payment.statusCode, 400, payment.body)
    assert.equal(payment.json().code, 'UNSUPPORTED_BLOCKCHAIN', payment.body)
    assert.match(payment.json().detail, /PAYWATCH_RPC_POLYGON/)
  } finally {
    await service.close()
  }
})
