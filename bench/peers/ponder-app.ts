// The peer "Ponder app" of bench:peers: Ponder installed where missing into a cache folder outside the
// project (never a dependency of Paywatch), and an app whose Transfer handler POSTs a transfer to an
// expected receiver. Started with the node running the benchmark, on Ponder's embedded PGlite.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

export const PONDER_VERSION = process.env.BENCH_PONDER_VERSION ?? '0.16'

/** The cache folder holding Ponder (BENCH_PONDER_DIR, else ~/.cache/paywatch-bench/ponder-<version>). */
export function ponderHome(): string {
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache')
  return process.env.BENCH_PONDER_DIR ?? join(base, 'paywatch-bench', `ponder-${PONDER_VERSION}`)
}

/** Installs Ponder into its cache folder unless it is there; returns the path of its CLI. */
export function installPonder(log: (line: string) => void): string {
  const home = ponderHome()
  const cli = join(home, 'node_modules', 'ponder', 'dist', 'esm', 'bin', 'ponder.js')
  if (existsSync(cli)) return cli
  mkdirSync(home, { recursive: true })
  writeFileSync(join(home, 'package.json'), JSON.stringify({ name: 'ponder-bench', private: true, type: 'module' }))
  log(`installing ponder@${PONDER_VERSION} into ${home} (once) …`)
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', `ponder@${PONDER_VERSION}`, 'viem@2'], {
    cwd: home,
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 600_000,
  })
  if (!existsSync(cli)) throw new Error(`npm installed no ponder CLI at ${cli}`)
  return cli
}

const config = `import { createConfig } from 'ponder'
import { parseAbi } from 'viem'

export default createConfig({
  database: { kind: 'pglite', directory: process.env.PEERS_PONDER_DATA },
  chains: {
    anvil: {
      id: Number(process.env.PEERS_CHAIN_ID),
      rpc: process.env.PEERS_HTTP_URL,
      ws: process.env.PEERS_WS_URL,
      disableCache: true,
    },
  },
  contracts: {
    Token: {
      chain: 'anvil',
      abi: parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']),
      address: process.env.PEERS_TOKEN as \`0x\${string}\`,
      startBlock: Number(process.env.PEERS_START_BLOCK),
    },
  },
})
`
const schema = `import { onchainTable } from 'ponder'

export const notified = onchainTable('notified', (t) => ({ id: t.text().primaryKey() }))
`
const handler = `import { readFileSync } from 'node:fs'
import { ponder } from 'ponder:registry'

const expected = new Set(readFileSync(process.env.PEERS_EXPECTED!, 'utf8').split('\\n').filter(Boolean))
const notifyUrl = process.env.PEERS_NOTIFY_URL!

ponder.on('Token:Transfer', async ({ event }) => {
  const to = event.args.to.toLowerCase()
  if (!expected.has(to)) return
  void fetch(notifyUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ receiver: to, transaction: event.transaction.hash, value: String(event.args.value) }),
  }).then((response) => response.arrayBuffer())
})
`

// Ponder 0.16 requires an API file; the app serves nothing of its own.
const api = `import { Hono } from 'hono'

export default new Hono()
`

/** Writes the app into a fresh folder under the cache folder (its modules resolve from there); returns the folder. */
export function writePonderApp(name: string): string {
  const root = join(ponderHome(), name)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'src'), { recursive: true })
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: `ponder-${name}`, private: true, type: 'module' }))
  writeFileSync(join(root, 'ponder.config.ts'), config)
  writeFileSync(join(root, 'ponder.schema.ts'), schema)
  writeFileSync(join(root, 'src', 'index.ts'), handler)
  mkdirSync(join(root, 'src', 'api'))
  writeFileSync(join(root, 'src', 'api', 'index.ts'), api)
  return root
}
