// Several `paywatch serve` processes against one PostgreSQL database and one Anvil: the real thing a
// node failure hits (SIGSTOP, SIGKILL, SIGTERM), for the lease tests and bench:takeover.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import type { Anvil } from './anvil.ts'
import { freePort, waitUntil } from './ports.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const node = join(root, 'node_modules', '.bin', 'node')
const main = join(root, 'src', 'cli', 'main.ts')
const ADMIN_TOKEN = 'cluster-admin-token-0123456789abcdef'

export interface ClusterNode {
  /** Also its PostgreSQL application_name (PGAPPNAME): its pool's writes can be told apart. */
  name: string
  pid: number
  port: number
  child: ChildProcess
  output(): string
  exited: Promise<void>
}

export interface Cluster {
  db: pg.Client
  nodes: ClusterNode[]
  start(name: string): Promise<ClusterNode>
  /** The node holding `chain`'s lease (by the pid in its holder id), with its token; undefined when none. */
  leader(chain?: string): Promise<{ node: ClusterNode | undefined; token: string; acquiredAt: Date } | undefined>
  newApiKey(node: ClusterNode): Promise<string>
  api(
    node: ClusterNode,
    apiKey: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> }>
  close(): Promise<void>
}

export async function startCluster(databaseUrl: string, anvil: Anvil, env: Record<string, string> = {}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'paywatch-cluster-'))
  const configFile = join(dir, 'config.json')
  writeFileSync(
    configFile,
    JSON.stringify({ chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId, pollingIntervalMs: 100 } } }),
  )
  const db = new pg.Client({ connectionString: databaseUrl, application_name: 'cluster-test' })
  await db.connect()
  const nodes: ClusterNode[] = []

  const start = async (name: string): Promise<ClusterNode> => {
    const port = await freePort()
    const child = spawn(node, [main, 'serve'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        LOG_LEVEL: 'info',
        PGAPPNAME: name,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        PAYWATCH_CONFIG: configFile,
        PAYWATCH_DATA_DIR: join(dir, name),
        PAYWATCH_ADMIN_TOKEN: ADMIN_TOKEN,
        PAYWATCH_RATE_RPS: '100000',
        PAYWATCH_RATE_PARALLEL: '1000',
        PAYWATCH_RATE_DAILY: '100000000',
        ...env,
      },
    })
    let output = ''
    child.stdout!.on('data', (chunk) => (output += chunk))
    child.stderr!.on('data', (chunk) => (output += chunk))
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
    const started: ClusterNode = { name, pid: child.pid!, port, child, output: () => output, exited }
    nodes.push(started)
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200,
      60_000,
      () => output,
    )
    return started
  }

  const api: Cluster['api'] = async (target, apiKey, method, path, body) => {
    const response = await fetch(`http://127.0.0.1:${target.port}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(apiKey === ADMIN_TOKEN ? { authorization: `Bearer ${apiKey}` } : { 'x-api-key': apiKey }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: response.status, json: (await response.json()) as Record<string, unknown> }
  }

  return {
    db,
    nodes,
    start,
    async leader(chain = 'ethereum') {
      const { rows } = await db.query<{ holder: string; token: string; acquired_at: Date }>(
        'SELECT holder, token::text AS token, acquired_at FROM chain_leases WHERE chain = $1 AND expires_at > now()',
        [chain],
      )
      const row = rows[0]
      if (!row) return undefined
      const pid = Number(row.holder.split('/')[1])
      return { node: nodes.find((n) => n.pid === pid), token: row.token, acquiredAt: row.acquired_at }
    },
    async newApiKey(target) {
      const account = await api(target, ADMIN_TOKEN, 'POST', '/admin/accounts', { name: 'cluster' })
      const key = await api(target, ADMIN_TOKEN, 'POST', `/admin/accounts/${String(account.json.id)}/api-keys`)
      return String(key.json.key)
    },
    api,
    async close() {
      for (const n of nodes) {
        try {
          n.child.kill('SIGCONT')
          n.child.kill('SIGKILL')
        } catch {
          // already gone
        }
      }
      await Promise.all(nodes.map((n) => n.exited))
      await db.end().catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
