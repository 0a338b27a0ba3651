// npm run bench:peers — the same job for Paywatch, a Ponder app and a 50-line viem watcher, side by side on
// one Anvil: a block a second of 50 ERC-20 transfers, of which 10 pay expected payments; each system has
// BENCH_PENDING expected payments (default 1,000 and 100,000 in turn) and announces each paying transfer to
// one receiver (Paywatch: its signed callback, confirmations 1; the peers: a POST). Every system talks to
// the node through its own counting proxy (bench/peers/rpc-counter.ts). All three follow every block; the
// blocks pay the systems in turn (round-robin), so their rounds interleave under the same machine load.
//
// Per system and size: block mined → notification received p50/p95, CPU s per 100 blocks (the process and
// its threads, from /proc), RSS peak, RPC requests (HTTP requests + WebSocket messages) per block; then the
// ratios to Paywatch. BENCH_ROUNDS (default 10; BENCH_FULL=1: 60) measured blocks per system and size,
// BENCH_SYSTEMS (default paywatch,ponder,viem) which run, DATABASE_URL puts Paywatch on PostgreSQL;
// `baseline` in BENCH_SYSTEMS runs a second Paywatch from the tree at BENCH_BASELINE_ROOT (e.g. an earlier
// commit with this bench in it) in the same rounds, for before/after figures under the same load (another
// path than this tree's, its processes are told apart by it: a symlink to this tree runs it as it is).
// BENCH_RPC_DELAY_MS holds every RPC message that long each way in the proxies (default 0: the node on this
// machine; 25 is a provider 50 ms away), so that each system's round trips after a notification count.
// BENCH_QUORUM (default 1) sets Paywatch's quorum, over that many more HTTP URLs of its proxy than the quorum.
// BENCH_SERVICE_FLAGS adds Node flags to `paywatch` alone (`--cpu-prof --cpu-prof-dir=…` to profile it in
// this job; with `baseline` a symlink to this tree, a flag against the same code without it).
// Ponder is installed on first use into ~/.cache/paywatch-bench (bench/peers/ponder-app.ts).
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { ChildProcess } from 'node:child_process'
import { sql } from 'kysely'
import { encodeFunctionData, type Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { createAccount } from '../src/store/accounts.ts'
import { openDatabase } from '../src/store/infrastructure/database.ts'
import { migrate } from '../src/store/infrastructure/migrate.ts'
import { deployToken, startAnvil, testTokenAbi } from '../test/support/index.ts'
import { createFreshDatabaseUrl, dropDatabase } from '../test/support/database.ts'
import { seedEmbeddedDataDir } from '../test/support/pglite-template.ts'
import { freePort } from '../test/support/ports.ts'
import { readStat } from './proc-cpu.ts'
import { installPonder, PONDER_VERSION, writePonderApp } from './peers/ponder-app.ts'
import { startRpcCounter, type RpcCounter } from './peers/rpc-counter.ts'
import { createAccountKey, SERVICE_MALLOC_ENV, startChild, stopChildren } from './service-child.ts'
import { forgetOwedChecks } from './bulk-pending.ts'

const root = fileURLToPath(new URL('../', import.meta.url))
const SIZES = (process.env.BENCH_PENDING ?? '1000,100000').split(',').map(Number)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (process.env.BENCH_FULL ? 60 : 10))
const WARMUP = 2
const QUORUM = Number(process.env.BENCH_QUORUM ?? 1)
const RPC_DELAY_MS = Number(process.env.BENCH_RPC_DELAY_MS ?? 0)
const SYSTEMS = (process.env.BENCH_SYSTEMS ?? 'paywatch,ponder,viem').split(',') as SystemName[]
const TRANSFERS = 50
const PAYING = 10
const BLOCK_MS = 1_000
const AMOUNT = 1_250_000n // 1.25 of a 6-decimals token
const ADMIN_TOKEN = randomBytes(16).toString('hex')
const databaseUrl = process.env.DATABASE_URL || null

type SystemName = 'paywatch' | 'baseline' | 'ponder' | 'viem'
interface System {
  name: SystemName
  child: ChildProcess
  proxy: RpcCounter
  rss: number[]
}
interface Figures {
  system: SystemName
  pending: number
  latencies: number[]
  missing: number
  cpuPer100: number
  rssPeak: number
  rpcPerBlock: number
  callsPerBlock: number
  methods: string
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : Number.NaN
}
const fresh = (): Address => `0x${randomBytes(20).toString('hex')}`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))
const now = () => performance.timeOrigin + performance.now()
const rssOf = (pid: number): number => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? 0) * 1024
  } catch {
    return 0
  }
}
const cpuOf = (pid: number) => readStat(`/proc/${pid}/stat`)?.cpuMs ?? 0
const log = (line: string) => console.log(line)

// --- the receiver, in a worker thread ----------------------------------------------------------------------
const receiver = new Worker(new URL('./peers/receiver-worker.ts', import.meta.url))
const { port: receiverPort } = await new Promise<{ port: number }>((resolve) => receiver.once('message', resolve))
const receiverUrl = `http://127.0.0.1:${receiverPort}`
const arrivals = (keys: string[]) =>
  new Promise<(number | null)[]>((resolve) => {
    receiver.once('message', (answer: { times: (number | null)[] }) => resolve(answer.times))
    receiver.postMessage({ take: keys })
  })

let ponderCli: string | undefined
let ponderUnavailable: string | undefined
if (SYSTEMS.includes('ponder')) {
  try {
    ponderCli = installPonder(log)
  } catch (error) {
    ponderUnavailable = `Ponder could not be installed: ${(error as Error).message.split('\n')[0]}`
  }
}

const results: Figures[] = []
log(
  `bench:peers — Paywatch on ${databaseUrl ? 'PostgreSQL' : 'the embedded database'}; ${TRANSFERS} transfers a block of which ${PAYING} pay; ` +
    `${ROUNDS} measured blocks per system and size (+${WARMUP} warm-up), pending ${SIZES.join(' / ')}` +
    (RPC_DELAY_MS > 0 ? `; every RPC message held ${RPC_DELAY_MS} ms each way` : '') +
    (QUORUM > 1 ? `; Paywatch's quorum ${QUORUM} of ${QUORUM + 1}` : ''),
)
for (const pending of SIZES) results.push(...(await runSize(pending)))
await receiver.terminate()
printTable(results)
process.exit(0)

async function runSize(pending: number): Promise<Figures[]> {
  const anvil = await startAnvil({ noMining: true, extraArgs: ['--auto-impersonate', '--gas-limit', '100000000'] })
  const dir = mkdtempSync(join(tmpdir(), 'paywatch-peers-'))
  const children: ChildProcess[] = []
  const systems: System[] = []
  const dbUrls: string[] = []
  try {
    let rpcId = 0
    const batch = async (calls: { method: string; params: unknown[] }[]) => {
      const response = await fetch(anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(calls.map((call) => ({ jsonrpc: '2.0', id: ++rpcId, ...call }))),
      })
      const answers = (await response.json()) as { error?: { message: string } }[]
      for (const answer of answers) if (answer.error) throw new Error(answer.error.message)
    }
    const token = (await deployToken(anvil, 'USD Coin', 'USDC', 6)).toLowerCase() as Address
    // With a quorum the senders sign their own transactions: an impersonated one's signature is fake, and the
    // quorum checks the judged transaction's signature (it would never agree).
    const signers = QUORUM > 1 ? Array.from({ length: TRANSFERS }, () => privateKeyToAccount(generatePrivateKey())) : undefined
    const senders = signers ? signers.map((signer) => signer.address) : Array.from({ length: TRANSFERS }, fresh)
    const chainId = await anvil.publicClient.getChainId()
    await batch(senders.map((address) => ({ method: 'anvil_setBalance', params: [address, '0x3635c9adc5dea00000'] })))
    const minter = anvil.accounts[0]!.address
    const minterNonce = await anvil.publicClient.getTransactionCount({ address: minter })
    await batch(
      senders.map((to, i) => ({
        method: 'eth_sendTransaction',
        params: [
          {
            from: minter,
            to: token,
            nonce: `0x${(minterNonce + i).toString(16)}`,
            data: encodeFunctionData({ abi: testTokenAbi, functionName: 'mint', args: [to, 10n ** 15n] }),
          },
        ],
      })),
    )
    await anvil.rpc('evm_mine')
    const startBlock = Number(await anvil.publicClient.getBlockNumber())

    // Block b pays the system SYSTEMS[b % n] with senders 0..9 at nonce b.
    const running = SYSTEMS.filter((name) => name !== 'ponder' || ponderCli)
    const blocks = (WARMUP + ROUNDS) * running.length
    const paid = Array.from({ length: blocks }, (_, b) => ({
      system: running[b % running.length]!,
      receivers: Array.from({ length: PAYING }, fresh),
    }))
    const expectedOf = (name: SystemName) => paid.filter((block) => block.system === name).flatMap((block) => block.receivers)

    // --- Paywatch: pending trackings in bulk, the paying ones through the API ---------------------------------
    const start: Promise<void>[] = []
    for (const name of running.filter((n) => n === 'paywatch' || n === 'baseline')) {
      const serviceRoot = name === 'baseline' ? process.env.BENCH_BASELINE_ROOT! : root
      if (name === 'baseline' && join(serviceRoot, 'x') === join(root, 'x'))
        throw new Error('BENCH_BASELINE_ROOT must be another path than this tree (a symlink to it will do)')
      const dataDir = join(dir, name)
      mkdirSync(dataDir, { mode: 0o700 }) // owner-only, as the service demands of its data folder
      const proxy = await startRpcCounter(anvil.rpcUrl, anvil.wsUrl, RPC_DELAY_MS)
      const dbUrl = await createFreshDatabaseUrl()
      if (dbUrl) dbUrls.push(dbUrl)
      else await seedEmbeddedDataDir(dataDir)
      const seeding = await openDatabase({ databaseUrl: dbUrl, dataDir })
      await migrate(seeding.db)
      const account = await createAccount(seeding.db, 'peers-filler')
      const filler = pending - expectedOf(name).length
      await sql`
        INSERT INTO trackings (id, account_id, secret_id, shape, blockchain, sender, nonce, receiver, token, decimals,
          commitment, confirmations, after_block, amount, transaction, callback, status, created_at, updated_at)
        SELECT md5('id' || g), ${account.id}, md5('secret' || g), 'current', 'ethereum',
          '0x' || substr(md5('s' || g), 1, 32) || substr(md5('t' || g), 1, 8), g % 100,
          '0x' || substr(md5('r' || g), 1, 32) || substr(md5('q' || g), 1, 8), ${token}, 6, 'confirmed', 1, 0, '1',
          NULL, ${`${receiverUrl}/filler`}, 'pending', now(), now()
        FROM generate_series(1, ${filler}::int) AS g`.execute(seeding.db)
      await forgetOwedChecks(seeding.db)
      await sql`ANALYZE trackings`.execute(seeding.db)
      await seeding.close()
      const configFile = join(dataDir, 'peers-config.json')
      writeFileSync(
        configFile,
        JSON.stringify({
          chains: {
            ethereum: {
              // A quorum of Q: Q + 1 HTTP URLs of the same proxy (the node's work is the same, its requests are counted as one system's).
              rpc: [...Array.from({ length: QUORUM > 1 ? QUORUM + 1 : 1 }, (_, i) => `${proxy.httpUrl}/${i}`), proxy.wsUrl],
              quorum: QUORUM,
              chainId: anvil.chainId,
              maxHeadAgeSeconds: null,
            },
          },
        }),
      )
      start.push(
        (async () => {
          const url = await startChild(
            name,
            [
              '--max-semi-space-size=16',
              // Node flags for `paywatch` alone: profile it in this job, or set a flag against `baseline` (the same tree without it).
              ...(name === 'paywatch' ? (process.env.BENCH_SERVICE_FLAGS?.split(' ').filter(Boolean) ?? []) : []),
              join(serviceRoot, 'bench', 'api-server.ts'),
              '--background',
            ],
            {
              PORT: String(await freePort()),
              HOST: '127.0.0.1',
              PAYWATCH_CONFIG: configFile,
              PAYWATCH_DATA_DIR: dataDir,
              ...(dbUrl ? { DATABASE_URL: dbUrl } : {}),
              PAYWATCH_ADMIN_TOKEN: ADMIN_TOKEN,
              PAYWATCH_ALLOW_PRIVATE_CALLBACKS: 'true',
              LOG_LEVEL: 'warn',
              // As the service runs (npm start): the first peers runs measured RSS without these.
              ...SERVICE_MALLOC_ENV,
              PAYWATCH_RATE_RPS: '1000000',
              PAYWATCH_RATE_PARALLEL: '100000',
              PAYWATCH_RATE_DAILY: '1000000000',
            },
            children,
          )
          const child = children.find((c) => c.spawnargs.includes(join(serviceRoot, 'bench', 'api-server.ts')))!
          systems.push({ name, child, proxy, rss: [] })
          const { key } = await createAccountKey(url, ADMIN_TOKEN)
          for (let b = 0; b < blocks; b++) {
            if (paid[b]!.system !== name) continue
            await Promise.all(
              paid[b]!.receivers.map(async (receiverAddress, i) => {
                const response = await fetch(`${url}/v2/payments`, {
                  method: 'POST',
                  headers: { 'content-type': 'application/json', 'x-api-key': key },
                  body: JSON.stringify({
                    blockchain: 'ethereum',
                    sender: senders[i],
                    nonce: b,
                    receiver: receiverAddress,
                    token,
                    amount: '1.25',
                    after_block: startBlock,
                    secret_id: `peers-${name}-${b}-${i}`,
                    callback: `${receiverUrl}/${name}`,
                  }),
                })
                if (response.status !== 201) throw new Error(`create answered ${response.status}: ${await response.text()}`)
              }),
            )
          }
        })(),
      )
    }
    // --- the peers: expected receivers in a file (the paying ones and random others up to `pending`) ----------
    const peerEnv = async (name: SystemName) => {
      const file = join(dir, `${name}-expected.txt`)
      const paying = expectedOf(name)
      const lines = [...paying, ...Array.from({ length: Math.max(0, pending - paying.length) }, fresh)]
      writeFileSync(file, `${lines.join('\n')}\n`)
      const proxy = await startRpcCounter(anvil.rpcUrl, anvil.wsUrl, RPC_DELAY_MS)
      return {
        proxy,
        env: {
          PEERS_EXPECTED: file,
          PEERS_NOTIFY_URL: `${receiverUrl}/${name}`,
          PEERS_TOKEN: token,
          PEERS_HTTP_URL: proxy.httpUrl,
          PEERS_WS_URL: proxy.wsUrl,
          PEERS_CHAIN_ID: String(anvil.chainId),
          PEERS_START_BLOCK: String(startBlock),
          MALLOC_ARENA_MAX: '2',
        },
      }
    }
    if (running.includes('viem')) {
      const { proxy, env } = await peerEnv('viem')
      start.push(
        startChild('viem', [join(root, 'bench', 'peers', 'viem-watcher.ts')], env, children).then(() => {
          systems.push({
            name: 'viem',
            child: children.find((c) => c.spawnargs.some((a) => a.endsWith('viem-watcher.ts')))!,
            proxy,
            rss: [],
          })
        }),
      )
    }
    if (running.includes('ponder')) {
      const { proxy, env } = await peerEnv('ponder')
      const app = writePonderApp(`app-${process.pid}`)
      const port = await freePort()
      const args = [ponderCli!, 'start', '--root', app, '--port', String(port), '--schema', 'public', '--log-level', 'warn']
      let ponderChild: ChildProcess | undefined
      start.push(
        (async () => {
          const { spawn } = await import('node:child_process')
          const child = (ponderChild = spawn(process.execPath, args, {
            cwd: app,
            env: {
              PATH: process.env.PATH ?? '',
              HOME: process.env.HOME ?? '',
              ...env,
              PEERS_PONDER_DATA: join(app, '.data'),
              PONDER_TELEMETRY_DISABLED: 'true',
            },
            stdio: ['ignore', 'pipe', 'pipe'],
          }))
          children.push(child)
          let output = ''
          child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk).slice(-4000)))
          child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk).slice(-4000)))
          const deadline = Date.now() + 180_000
          for (;;) {
            if (child.exitCode !== null) throw new Error(`ponder exited (${child.exitCode}): ${output}`)
            if (Date.now() > deadline) throw new Error(`ponder was not ready within 180 s: ${output}`)
            const ready = await fetch(`http://127.0.0.1:${port}/ready`).then(
              (r) => r.status === 200,
              () => false,
            )
            if (ready) break
            await sleep(500)
          }
          systems.push({ name: 'ponder', child, proxy, rss: [] })
        })().catch((error: Error) => {
          // Ponder that cannot run here is said why, and the others are measured without it.
          ponderUnavailable = `Ponder did not run: ${error.message.slice(0, 2_000)}`
          log(ponderUnavailable)
          ponderChild?.kill('SIGKILL')
        }),
      )
    }
    const started = await Promise.allSettled(start)
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason
    // The fast-path checks of the new trackings, Ponder's first sync: let them finish.
    await sleep(3_000)

    const sample = setInterval(() => {
      for (const system of systems) system.rss.push(rssOf(system.child.pid!))
    }, 1_000)
    const mined: number[] = []
    let cpuBefore = new Map<SystemName, number>()
    let rpcBefore = new Map<SystemName, { requests: number; calls: number; methods: Map<string, number> }>()
    let tick = now()
    for (let b = 0; b < blocks; b++) {
      if (b === WARMUP * running.length) {
        cpuBefore = new Map(systems.map((s) => [s.name, cpuOf(s.child.pid!)]))
        rpcBefore = new Map(
          systems.map((s) => [s.name, { requests: s.proxy.requests, calls: s.proxy.calls, methods: new Map(s.proxy.methods) }]),
        )
        for (const system of systems) system.rss.length = 0
      }
      const receivers = paid[b]!.receivers
      const transfer = (i: number) =>
        encodeFunctionData({ abi: testTokenAbi, functionName: 'transfer', args: [i < PAYING ? receivers[i]! : fresh(), AMOUNT] })
      await batch(
        await Promise.all(
          senders.map(async (from, i) =>
            signers
              ? {
                  method: 'eth_sendRawTransaction',
                  params: [
                    await signers[i]!.signTransaction({
                      chainId,
                      type: 'eip1559',
                      to: token,
                      nonce: b,
                      gas: 100_000n,
                      maxFeePerGas: 10n ** 11n,
                      maxPriorityFeePerGas: 10n ** 9n,
                      data: transfer(i),
                    }),
                  ],
                }
              : {
                  method: 'eth_sendTransaction',
                  params: [{ from, to: token, nonce: `0x${b.toString(16)}`, gas: '0x186a0', data: transfer(i) }],
                },
          ),
        ),
      )
      tick += BLOCK_MS
      await sleep(tick - now())
      mined.push(now())
      await anvil.rpc('evm_mine')
      await sleep(BLOCK_MS / 2)
    }
    await sleep(3_000)
    clearInterval(sample)
    const measuredBlocks = blocks - WARMUP * running.length
    const figures: Figures[] = []
    for (const system of systems) {
      const keys: { key: string; block: number }[] = []
      for (let b = WARMUP * running.length; b < blocks; b++) {
        if (paid[b]!.system !== system.name) continue
        for (const address of paid[b]!.receivers) keys.push({ key: `/${system.name}:${address.toLowerCase()}`, block: b })
      }
      const times = await arrivals(keys.map((k) => k.key))
      const latencies = times.flatMap((at, i) => (at === null ? [] : [at - mined[keys[i]!.block]!]))
      const before = rpcBefore.get(system.name)!
      const methods = [...system.proxy.methods]
        .map(([method, count]) => [method, (count - (before.methods.get(method) ?? 0)) / measuredBlocks] as const)
        .filter(([, perBlock]) => perBlock > 0)
        .sort((a, b) => b[1] - a[1])
        .map(([method, perBlock]) => `${method} ${perBlock.toFixed(2)}`)
        .join(', ')
      figures.push({
        system: system.name,
        pending,
        latencies,
        missing: times.filter((at) => at === null).length,
        cpuPer100: ((cpuOf(system.child.pid!) - cpuBefore.get(system.name)!) / 1000 / measuredBlocks) * 100,
        rssPeak: Math.max(...system.rss),
        rpcPerBlock: (system.proxy.requests - before.requests) / measuredBlocks,
        callsPerBlock: (system.proxy.calls - before.calls) / measuredBlocks,
        methods,
      })
    }
    for (const f of figures) {
      log(
        `  ${f.pending.toLocaleString('en')} pending, ${f.system}: p50 ${percentile(f.latencies, 50).toFixed(1)} ms, p95 ${percentile(f.latencies, 95).toFixed(1)} ms` +
          ` (${f.latencies.length} notifications${f.missing ? `, ${f.missing} MISSING` : ''}); RPC per block: ${f.methods || 'none'}`,
      )
    }
    return figures
  } finally {
    await stopChildren(children)
    for (const system of systems) await system.proxy.close()
    await anvil.stop()
    rmSync(dir, { recursive: true, force: true })
    for (const url of dbUrls) await dropDatabase(url)
  }
}

function printTable(all: Figures[]): void {
  const label: Record<SystemName, string> = {
    paywatch: 'Paywatch (signed callback)',
    baseline: `Paywatch at ${process.env.BENCH_BASELINE_ROOT ?? 'baseline'} (signed callback)`,
    ponder: `Ponder ${PONDER_VERSION} app (Transfer handler → POST)`,
    viem: 'viem `watchContractEvent` over a WebSocket → POST',
  }
  log('')
  log('| system | pending | block mined → notification p50 / p95 | CPU s per 100 blocks | RSS peak | RPC requests per block |')
  log('|---|---|---|---|---|---|')
  for (const f of all) {
    log(
      `| ${label[f.system]} | ${f.pending.toLocaleString('en')} | ${percentile(f.latencies, 50).toFixed(1)} / ${percentile(f.latencies, 95).toFixed(1)} ms | ` +
        `${f.cpuPer100.toFixed(1)} | ${(f.rssPeak / 2 ** 20).toFixed(0)} MB | ${f.rpcPerBlock.toFixed(2)} (${f.callsPerBlock.toFixed(2)} calls) |`,
    )
  }
  if (ponderUnavailable) log(`\nPonder not measured: ${ponderUnavailable}`)
  log('')
  for (const pending of SIZES) {
    const of = (name: SystemName) => all.find((f) => f.system === name && f.pending === pending)
    const paywatch = of('paywatch')
    if (!paywatch) continue
    for (const peer of ['baseline', 'ponder', 'viem'] as const) {
      const other = of(peer)
      if (!other) continue
      log(
        `${pending.toLocaleString('en')} pending, Paywatch ÷ ${peer}: p50 ×${(percentile(paywatch.latencies, 50) / percentile(other.latencies, 50)).toFixed(2)}, ` +
          `p95 ×${(percentile(paywatch.latencies, 95) / percentile(other.latencies, 95)).toFixed(2)}, CPU ×${(paywatch.cpuPer100 / other.cpuPer100).toFixed(2)}, ` +
          `RSS ×${(paywatch.rssPeak / other.rssPeak).toFixed(2)}, RPC ×${(paywatch.rpcPerBlock / Math.max(other.rpcPerBlock, 0.01)).toFixed(2)}`,
      )
    }
  }
}
