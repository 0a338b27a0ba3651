// The service in its own process for the benchmarks (bench/api-server.ts): started, keyed, stopped.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../', import.meta.url))

/** The malloc settings `npm start` and `npx paywatch` run the service with (package.json, bin/paywatch.js). */
export const SERVICE_MALLOC_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' }

/**
 * Starts a server script under this node and resolves with its URL once it printed {"listening": …}.
 * The child is added to `children` (for `stopChildren`); `ipc` opens a message channel to it.
 */
export function startChild(
  name: string,
  args: string[],
  env: Record<string, string>,
  children: ChildProcess[],
  options: { ipc?: boolean } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdio = options.ipc ? (['ignore', 'pipe', 'pipe', 'ipc'] as const) : (['ignore', 'pipe', 'pipe'] as const)
    const child = spawn(process.execPath, args, { cwd: root, env: { PATH: process.env.PATH ?? '', ...env }, stdio: [...stdio] })
    children.push(child)
    let output = ''
    const onData = (chunk: Buffer) => {
      output += chunk
      const line = output.split('\n').find((l) => l.startsWith('{"listening"'))
      if (line) resolve((JSON.parse(line) as { listening: string }).listening)
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk
      if (process.env.BENCH_VERBOSE) process.stderr.write(chunk)
    })
    child.on('exit', (code) => reject(new Error(`${name} server exited (${code}): ${output}`)))
  })
}

/** Sends `message` to a child started with `ipc` (bench/api-server.ts answers 'memory', 'gc', {snapshot}) and resolves with its answer. */
export function askChild<T>(child: ChildProcess, message: string | object): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', resolve as (answer: unknown) => void)
    child.send(message)
  })
}

/** A new account and API key through the admin API. */
export async function createAccountKey(serviceUrl: string, adminToken: string): Promise<{ accountId: string; key: string }> {
  const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }
  const account = (await (
    await fetch(`${serviceUrl}/admin/accounts`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) })
  ).json()) as { id: string }
  const key = (await (
    await fetch(`${serviceUrl}/admin/accounts/${account.id}/api-keys`, { method: 'POST', headers, body: '{}' })
  ).json()) as { key: string }
  return { accountId: account.id, key: key.key }
}

/** SIGTERM to every child still running (SIGKILL after 5 s); resolves when all have exited. */
export async function stopChildren(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve()
          child.removeAllListeners('exit')
          child.once('exit', () => resolve())
          child.kill('SIGTERM')
          setTimeout(() => child.kill('SIGKILL'), 5_000).unref()
        }),
    ),
  )
}

/**
 * The body of a create for the load benchmarks: a native payment from a random sender to a random
 * receiver, `secret_id` `<label>-<serial>`, so that every create stores a new tracking.
 */
export function randomPaymentBody(options: { label: string; serial: number; nonce: number; afterBlock: number }): string {
  return JSON.stringify({
    blockchain: 'ethereum',
    sender: `0x${randomBytes(20).toString('hex')}`,
    nonce: options.nonce,
    receiver: `0x${randomBytes(20).toString('hex')}`,
    token: '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
    amount: '1.25',
    after_block: options.afterBlock,
    secret_id: `${options.label}-${options.serial}`,
    callback: 'https://merchant.example/cb',
  })
}
