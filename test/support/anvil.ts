// Starts a real `anvil` node for chain tests and hands back ready-made viem clients.
//
// Design notes (why it looks like this):
// - Port: anvil is started with `--port 0`, so the kernel picks a free port and there is no
//   "probe a port, then race another process for it" window. We read the real port from
//   anvil's "Listening on host:port" line. Several test processes can run at once safely.
// - Orphans: anvil runs under a tiny `sh` watchdog whose stdin is a pipe from this process.
//   When this process dies for *any* reason (crash, SIGKILL, test-runner timeout), the kernel
//   closes the pipe, the watchdog sees EOF and kills anvil. On a normal exit we also SIGKILL
//   any anvil still alive from a `process.on("exit")` hook.
// - Clients poll every 25 ms with no response cache: the default 4 s polling would make every
//   receipt wait take seconds, and caching would hide blocks we just mined.
import { spawn, type ChildProcess } from 'node:child_process'
import { anvilBinary, anvilWatchdogScript } from '../../src/cli/anvil-watchdog.ts'
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
  type Address,
  type Chain,
  type Hex,
  type HttpTransport,
  type PublicClient,
  type TestClient,
  type WalletClient,
} from 'viem'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'

export interface StartAnvilOptions {
  /** Chain id reported by the node. Default 31337. */
  chainId?: number
  /** Interval mining every N seconds. Undefined = automine (a block per transaction). */
  blockTime?: number
  /** Disable automine and interval mining; blocks only appear via `mine()`/`evm_mine`. */
  noMining?: boolean
  /**
   * Slots per epoch. anvil reports `safe` = head - slots and `finalized` = head - 2*slots,
   * so `1` gives finalized = head - 2 (default in anvil is 32, i.e. finalized lags by 64).
   */
  slotsInAnEpoch?: number
  /** Any other anvil CLI flags, e.g. ["--hardfork", "cancun"]. */
  extraArgs?: string[]
  /** How long to wait for the node to answer RPC. Default 20 s. */
  startupTimeoutMs?: number
}

/** A wallet client bound to one funded dev account. */
export type TestWallet = WalletClient<HttpTransport, Chain, PrivateKeyAccount>
export type TestPublicClient = PublicClient<HttpTransport, Chain>
export type TestTestClient = TestClient<'anvil', HttpTransport, Chain>

/** One of anvil's default funded accounts (10 000 ETH each). */
export interface AnvilAccount {
  address: Address
  privateKey: Hex
  account: PrivateKeyAccount
  wallet: TestWallet
}

/** Transaction request accepted by `anvil_reorg` (anvil signs it with its dev keys). */
export interface ReorgTx {
  from: Address
  to?: Address
  value?: Hex
  data?: Hex
  gas?: Hex
}

export interface Anvil {
  rpcUrl: string
  wsUrl: string
  port: number
  chainId: number
  chain: Chain
  publicClient: TestPublicClient
  testClient: TestTestClient
  /** Wallet of accounts[0], the default deployer used by deploy helpers. */
  walletClient: TestWallet
  accounts: AnvilAccount[]
  /** Raw JSON-RPC call, for methods viem does not type (debug_*, anvil_reorg, eth_getBlockReceipts). */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>
  /**
   * `anvil_reorg`: drops the last `depth` blocks and mines `depth` new ones in their place
   * (head height stays the same, hashes change). `txs` are `[tx, blockOffset]` pairs where the
   * offset counts from the first replaced block (0 = first new block). Transactions from the
   * dropped blocks are NOT re-included.
   */
  reorg(depth: number, txs?: Array<[ReorgTx | Hex, number]>): Promise<void>
  /** Kill anvil and wait for it to exit. Safe to call twice. */
  stop(): Promise<void>
}

/** Anvil runs behind src/cli/anvil-watchdog.ts's shell: it never outlives the test process. */
export { anvilBinary }

const live = new Set<{ pid: number | undefined; child: ChildProcess }>()
let exitHookInstalled = false
function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => {
    // Kill anvil itself (its watchdog reaps it and exits). If we never learned its pid, the
    // watchdog still kills it when our end of the stdin pipe closes as this process dies.
    for (const p of live) {
      try {
        if (p.pid) process.kill(p.pid, 'SIGKILL')
      } catch {
        /* already gone */
      }
    }
  })
}

function anvilArgs(opts: StartAnvilOptions, chainId: number): string[] {
  const args = ['--port', '0', '--host', '127.0.0.1', '--chain-id', String(chainId)]
  if (opts.noMining && opts.blockTime !== undefined) {
    throw new Error('startAnvil: noMining and blockTime are mutually exclusive')
  }
  if (opts.noMining) args.push('--no-mining')
  if (opts.blockTime !== undefined) args.push('--block-time', String(opts.blockTime))
  if (opts.slotsInAnEpoch !== undefined) {
    args.push('--slots-in-an-epoch', String(opts.slotsInAnEpoch))
  }
  args.push(...(opts.extraArgs ?? []))
  return args
}

interface Spawned {
  child: ChildProcess
  entry: { pid: number | undefined; child: ChildProcess }
  port: number
  privateKeys: Hex[]
  exited: Promise<void>
}

/** Spawns anvil and resolves once it prints its listening address. */
function spawnAnvil(args: string[], timeoutMs: number): Promise<Spawned> {
  installExitHook()
  const child = spawn('/bin/sh', ['-c', anvilWatchdogScript({ announcePid: true }), anvilBinary(), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const entry: Spawned['entry'] = { pid: undefined, child }
  live.add(entry)
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      live.delete(entry)
      resolve()
    })
  })

  return new Promise<Spawned>((resolve, reject) => {
    let out = ''
    let err = ''
    let done = false
    const fail = (why: string) => {
      if (done) return
      done = true
      clearTimeout(timer)
      child.stdin?.end()
      child.kill('SIGKILL')
      reject(new Error(`anvil failed to start: ${why}\nargs: ${args.join(' ')}\nstderr: ${err}\nstdout: ${out.slice(-2000)}`))
    }
    const timer = setTimeout(() => fail(`timeout after ${timeoutMs} ms`), timeoutMs)
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString()
    })
    child.stdout?.on('data', (d: Buffer) => {
      if (done) return // keep draining so anvil never blocks on a full pipe
      out += d.toString()
      const pidMatch = /anvil-pid: (\d+)/.exec(out)
      if (pidMatch?.[1]) entry.pid = Number(pidMatch[1])
      const listen = /Listening on [^\s:]+:(\d+)/.exec(out)
      if (!listen?.[1]) return
      done = true
      clearTimeout(timer)
      const privateKeys = [...out.matchAll(/\(\d+\) (0x[0-9a-fA-F]{64})\b/g)].map((m) => m[1] as Hex)
      resolve({ child, entry, port: Number(listen[1]), privateKeys, exited })
    })
    child.once('exit', (code, signal) => fail(`exited early (code ${code}, signal ${signal})`))
    child.once('error', (e) => fail(String(e)))
  })
}

async function waitForRpc(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      })
      if (res.ok) return
      lastError = new Error(`HTTP ${res.status}`)
    } catch (e) {
      lastError = e
    }
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`anvil RPC at ${url} did not answer: ${String(lastError)}`)
}

let rpcId = 0
async function rawRpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
  })
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string; data?: unknown } }
  if (body.error) {
    const e = new Error(`${method} failed: ${body.error.message} (code ${body.error.code})`)
    ;(e as Error & { rpcError: unknown }).rpcError = body.error
    throw e
  }
  return body.result as T
}

/** Start a fresh anvil node. Always pair with `await anvil.stop()` in `after()`. */
export async function startAnvil(opts: StartAnvilOptions = {}): Promise<Anvil> {
  const chainId = opts.chainId ?? 31337
  const timeoutMs = opts.startupTimeoutMs ?? 20_000
  const args = anvilArgs(opts, chainId)

  // With --port 0 a bind conflict should be impossible, but retry on one anyway: it is cheap
  // and keeps the harness robust if someone passes an explicit --port in extraArgs.
  let spawned: Spawned | undefined
  for (let attempt = 1; ; attempt++) {
    try {
      spawned = await spawnAnvil(args, timeoutMs)
      break
    } catch (e) {
      if (attempt >= 3 || !/address already in use|AddrInUse/i.test(String(e))) throw e
    }
  }
  const { child, port, privateKeys, exited } = spawned
  const rpcUrl = `http://127.0.0.1:${port}`
  const wsUrl = `ws://127.0.0.1:${port}`

  let stopped = false
  const stop = async (): Promise<void> => {
    if (stopped) return exited
    stopped = true
    child.stdin?.end() // watchdog sees EOF and SIGTERMs anvil
    const force = setTimeout(() => {
      try {
        if (spawned.entry.pid) process.kill(spawned.entry.pid, 'SIGKILL')
      } catch {
        /* gone */
      }
      child.kill('SIGKILL')
    }, 5_000)
    await exited
    clearTimeout(force)
  }

  try {
    await waitForRpc(rpcUrl, timeoutMs)
  } catch (e) {
    await stop()
    throw e
  }

  const chain = defineChain({
    id: chainId,
    name: `Anvil ${port}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl], webSocket: [wsUrl] } },
    testnet: true,
  })
  const transport = http(rpcUrl, { retryCount: 0 })
  const clientOpts = { chain, transport, pollingInterval: 25, cacheTime: 0 } as const

  const publicClient: TestPublicClient = createPublicClient(clientOpts)
  const testClient: TestTestClient = createTestClient({ ...clientOpts, mode: 'anvil' })
  const accounts: AnvilAccount[] = privateKeys.map((privateKey) => {
    const account = privateKeyToAccount(privateKey)
    return { address: account.address, privateKey, account, wallet: createWalletClient({ ...clientOpts, account }) }
  })
  const first = accounts[0]
  if (!first) {
    await stop()
    throw new Error('anvil printed no dev accounts (did extraArgs set --accounts 0?)')
  }

  const rpc = <T = unknown>(method: string, params: unknown[] = []): Promise<T> => rawRpc<T>(rpcUrl, method, params)

  return {
    rpcUrl,
    wsUrl,
    port,
    chainId,
    chain,
    publicClient,
    testClient,
    walletClient: first.wallet,
    accounts,
    rpc,
    // anvil_reorg takes positional params [depth, [[tx, blockOffset], ...]], not an object.
    reorg: async (depth, txs = []) => {
      await rpc('anvil_reorg', [depth, txs])
    },
    stop,
  }
}
