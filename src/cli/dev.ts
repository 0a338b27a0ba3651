import { randomBytes } from 'node:crypto'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import type { Config } from '../config/config.ts'
import { createAccount } from '../store/accounts.ts'
import { createApiKey } from '../store/api-keys.ts'
import { createService } from '../service.ts'
import { assertDataDirFree } from '../store/data-dir-lock.ts'
import { anvilBinary, anvilWatchdogScript } from './anvil-watchdog.ts'
import { writeDevSession } from './dev-pay.ts'
import { onStopSignals } from './stop-signals.ts'

const ANVIL_CHAIN_ID = 31337

/**
 * A local playground: a fresh Anvil node stands in for `ethereum`, the service runs on an embedded
 * database of its own, and an account with an API key is created and printed.
 */
/** Where `paywatch dev` keeps its embedded database and its session file. */
export const devDataDir = (base: Config): string => (base.databaseUrl ? base.dataDir : join(base.dataDir, 'dev'))

export async function dev(base: Config, options: { anvilPort: number }): Promise<void> {
  const dataDir = devDataDir(base)
  // A second `dev` on the folder stops here with one line, before its Anvil could take the port.
  if (!base.databaseUrl) assertDataDirFree(dataDir)
  const anvil = startAnvil(options.anvilPort)
  const rpc = `http://127.0.0.1:${options.anvilPort}`

  // Requests over HTTP; the WebSocket URL only wakes the follower on each new block (newHeads).
  const config: Config = {
    ...base,
    dataDir,
    // A fresh random token on each start, printed below: a fixed one would be known to everyone.
    adminToken: base.adminToken ?? randomBytes(24).toString('base64url'),
    allowPrivateCallbacks: true,
    chains: {
      ...base.chains,
      ethereum: { ...base.chains.ethereum!, rpc: [rpc, `ws://127.0.0.1:${options.anvilPort}`], chainId: ANVIL_CHAIN_ID, finalityDepth: 2 },
    },
  }
  // Anvil's chain is new on each start, so the embedded database is too: progress, trackings and
  // accounts of a previous chain would not match this one.
  const starting = waitForRpc(rpc, anvil.exited).then(() => createService(config, { freshDatabase: true }))
  // The service first (HTTP, workers, chain clients, database), then Anvil: with Anvil gone first,
  // the follower's WebSocket would be reconnecting to it while the service stops.
  const stopping = onStopSignals(async () => {
    await (await starting.catch(() => undefined))?.close()
    await anvil.stop()
  })
  const service = await starting.catch(async (error: unknown) => {
    await anvil.stop()
    throw error
  })
  if (stopping()) return
  const account = await createAccount(service.database.db, 'dev')
  const key = await createApiKey(service.database.db, account.id)
  const address = await service.listen()
  writeDevSession(dataDir, { api: address, apiKey: key.key, rpc, pid: process.pid })
  console.log(
    [
      '',
      `paywatch dev: API ${address}, chain "ethereum" = local Anvil at ${rpc} (chain id ${ANVIL_CHAIN_ID})`,
      `  account id : ${account.id}`,
      `  API key    : ${key.key}`,
      `  admin token: ${config.adminToken}`,
      `  docs       : ${address}/docs`,
      '',
      'First payment: in a second terminal, a callback receiver (examples/node-http.ts):',
      `  PAYWATCH_URL=${address} PAYWATCH_API_KEY=${key.key} npm run example:receiver`,
      'and in a third, a payment on this chain with its callback to that receiver:',
      `  npx paywatch dev pay --callback http://127.0.0.1:4000/`,
      '',
    ].join('\n'),
  )
}

// Anvil runs in a process group of its own, so that a Ctrl-C (SIGINT to the terminal's foreground
// group) or `kill -- -pgid` reaches only paywatch, which stops it after the service. Being outside
// our group, it is ended by the watchdog shell when paywatch closes its stdin or dies in any way.
function startAnvil(port: number): { exited: Promise<number | null>; stop(): Promise<void> } {
  const child = spawn(
    '/bin/sh',
    ['-c', anvilWatchdogScript({ announcePid: false }), anvilBinary(), '--port', String(port), '--block-time', '2', '--silent'],
    {
      detached: true,
      stdio: ['pipe', 'inherit', 'inherit'],
    },
  )
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return {
    exited,
    async stop() {
      child.stdin!.end() // EOF: the watchdog stops Anvil and exits once Anvil has
      await exited
    },
  }
}

async function waitForRpc(url: string, exited: Promise<number | null>): Promise<void> {
  let gone: number | null | undefined
  void exited.then((code) => (gone = code))
  for (let attempt = 0; attempt < 100; attempt++) {
    // A port in use ends Anvil at once; whatever else answers on it is not our chain.
    if (gone !== undefined) throw new Error(`anvil exited (code ${gone}) before answering at ${url}`)
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        signal: AbortSignal.timeout(1_000), // a listener that never answers must not stall the exit check
      })
      if (response.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`anvil did not start at ${url}`)
}
