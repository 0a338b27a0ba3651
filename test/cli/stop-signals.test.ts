// `paywatch dev` and `paywatch serve` end on SIGTERM and on SIGINT with code 0 within seconds. The
// signal goes to the whole process group, as a terminal's Ctrl-C or `kill -- -pgid` sends it: that
// also reached dev's Anvil, which died under the chain follower, whose stop then waited forever.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, test } from 'node:test'
import { seedEmbeddedDataDir } from '../support/pglite-template.ts'
import { startAnvil } from '../support/anvil.ts'
import { freePort, waitUntil } from '../support/ports.ts'
import { trickle, type Trickle } from '../support/trickle.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const node = join(root, 'node_modules', '.bin', 'node')
const main = join(root, 'src', 'cli', 'main.ts')

let dataDir: string
before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'paywatch-stop-'))
  // dev keeps its embedded database in <data dir>/dev; seeded, neither command pays an initdb.
  await Promise.all(['serve', 'dev', 'node-gone'].map((dir) => seedEmbeddedDataDir(join(dataDir, dir))))
})
after(() => rmSync(dataDir, { recursive: true, force: true }))

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`dev: ${signal} to the process group stops the service, then Anvil, and exits 0`, async () => {
    const [port, anvilPort] = [await freePort(), await freePort()]
    const output = await stopBySignal(
      ['dev', '--anvil-port', String(anvilPort)],
      { PAYWATCH_DATA_DIR: dataDir, PORT: String(port) },
      port,
      signal,
    )
    assert.doesNotMatch(output, /ErrorEvent|still open after shutdown/, 'no reconnect to a gone Anvil, nothing left open')
    await assert.rejects(fetch(`http://127.0.0.1:${anvilPort}`, { method: 'POST' }), 'Anvil stopped too')
  })

  test(`serve: ${signal} to the process group exits 0`, async () => {
    const port = await freePort()
    const output = await stopBySignal(['serve'], { PAYWATCH_DATA_DIR: join(dataDir, 'serve'), PORT: String(port) }, port, signal)
    assert.doesNotMatch(output, /still open after shutdown/)
  })
}

// Under `npm start` or `npx paywatch`, a signal to the group reaches the service twice: directly and passed on
// by the launcher. The copy must not cut the ordered shutdown short (exit 143 before it ends).
test('serve: SIGTERM delivered twice (group signal plus a launcher passing it on) still shuts down in order', async () => {
  const port = await freePort()
  const output = await stopBySignal(
    ['serve'],
    { PAYWATCH_DATA_DIR: join(dataDir, 'serve'), PORT: String(port), LOG_LEVEL: 'info' },
    port,
    'SIGTERM',
    undefined,
    true,
  )
  assert.doesNotMatch(output, /again; exiting without finishing/)
  assert.match(output, /"msg":"stopped"/, 'the shutdown ran to its end')
})

// A client trickling a request body kept the HTTP server from closing: the stop ran into its 20 s limit (exit 1).
test('serve: SIGTERM while clients trickle a request body and request headers exits 0', async () => {
  const port = await freePort()
  const slow: Trickle[] = []
  try {
    const env = { PAYWATCH_DATA_DIR: join(dataDir, 'serve'), PORT: String(port), PAYWATCH_ADMIN_TOKEN: TOKEN }
    const output = await stopBySignal(['serve'], env, port, 'SIGTERM', async () => {
      slow.push(
        await trickle(
          port,
          `POST /admin/accounts HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${TOKEN}\r\n` +
            'content-type: application/json\r\ncontent-length: 60000\r\n\r\n{"name":"',
        ),
      )
      slow.push(await trickle(port, 'GET /healthz HTTP/1.1\r\nhost: localhost\r\n', { drip: 'x-slow: y\r\n' }))
      await new Promise((resolve) => setTimeout(resolve, 500)) // the requests are being read
    })
    assert.doesNotMatch(output, /did not finish|still open after shutdown/)
    for (const s of slow) await s.closed
  } finally {
    for (const s of slow) s.stop()
  }
})
const TOKEN = 'stop-signals-admin-token-0123456789abcdef'

// The follower's stop awaited viem's eth_unsubscribe, which never settles once the WebSocket is down.
test('serve: SIGTERM while the chain node behind its WebSocket is gone exits 0', async () => {
  const anvil = await startAnvil({ blockTime: 1 })
  const configFile = join(dataDir, 'node-gone.json')
  writeFileSync(configFile, JSON.stringify({ chains: { localnet: { chainId: anvil.chainId, rpc: [anvil.rpcUrl, anvil.wsUrl] } } }))
  const port = await freePort()
  const env = { PAYWATCH_DATA_DIR: join(dataDir, 'node-gone'), PAYWATCH_CONFIG: configFile, PORT: String(port) }
  await stopBySignal(['serve'], env, port, 'SIGTERM', async () => {
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200,
      30_000,
      () => 'chain not followed',
    )
    await new Promise((resolve) => setTimeout(resolve, 1_000)) // the newHeads subscription is made
    await anvil.stop()
  })
})

/** Starts the CLI in a process group of its own, waits for /healthz, signals the group (`twice`: again once the first is being handled); returns the output. */
async function stopBySignal(
  args: string[],
  env: Record<string, string>,
  port: number,
  signal: NodeJS.Signals,
  beforeSignal?: () => Promise<void>,
  twice = false,
): Promise<string> {
  const child = spawn(node, [main, ...args], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
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
      60_000,
      () => output,
    )
    await beforeSignal?.()
    process.kill(-child.pid!, signal)
    if (twice) {
      // The copy comes once the first is being handled (sent together, the kernel would merge them into one).
      await waitUntil(
        async () => output.includes('"msg":"shutting down"'),
        5_000,
        () => output,
        1,
      )
      try {
        process.kill(-child.pid!, signal)
      } catch {
        // already gone
      }
    }
    const result = await Promise.race([exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 10_000))])
    assert.notEqual(result, 'timeout', `still running 10 s after ${signal}: ${output}`)
    // A copy arriving as the process ends after a complete shutdown meets the default action: no harm done.
    if (!(twice && result !== 'timeout' && result.signal === signal && output.includes('"msg":"stopped"'))) {
      assert.deepEqual(result, { code: 0, signal: null }, output)
    }
    return output
  } finally {
    // Whatever is left of the group (the CLI, Anvil) must not outlive the test.
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // the group is gone: the expected case
    }
  }
}
