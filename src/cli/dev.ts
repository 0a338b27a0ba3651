import { randomBytes } from 'node:crypto'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import type { Config } from '../config/config.ts'
import { createService } from '../service.ts'
import { assertDataDirFree } from '../store/infrastructure/data-dir-lock.ts'
import { anvilBinary, anvilWatchdogScript } from './anvil-watchdog.ts'
import { loadDevIdentity, restoreDevAccount } from './dev-identity.ts'
import { DEV_BLOCK_SECONDS, writeDevSession } from './dev-session.ts'
import { deployDevToken, DEV_TOKEN } from './dev-token.ts'
import { stopWhenOrphaned } from './orphan-watch.ts'
import { onStopSignals } from './stop-signals.ts'

const ANVIL_CHAIN_ID = 31337

/** Where `paywatch dev` keeps its embedded database and its session file. */
export const devDataDir = (base: Config): string => (base.databaseUrl ? base.dataDir : join(base.dataDir, 'dev'))

/**
 * A local playground: a fresh Anvil node stands in for `ethereum` (with an ERC-20, DUSD), the service runs
 * on an embedded database of its own, and the dev account's API key is printed. The signing key, the
 * account and the API key are kept in the data folder: the same on every start (docs/operations.md).
 */
export async function dev(base: Config, options: { anvilPort: number }): Promise<void> {
  const dataDir = devDataDir(base)
  // A second `dev` on the folder stops here with one line, before its Anvil could take the port.
  if (!base.databaseUrl) assertDataDirFree(dataDir)
  const identity = loadDevIdentity(dataDir)
  const anvil = startAnvil(options.anvilPort)
  const rpc = `http://127.0.0.1:${options.anvilPort}`

  const configOf = (token: string): Config => ({
    ...base,
    dataDir,
    // A fresh random token on each start, printed below: a fixed one would be known to everyone.
    adminToken: base.adminToken ?? randomBytes(24).toString('base64url'),
    signingKey: base.signingKey ?? identity.signingKey,
    allowPrivateCallbacks: true,
    chains: {
      ...base.chains,
      // Requests over HTTP; the WebSocket URL only wakes the follower on each new block (newHeads).
      ethereum: {
        ...base.chains.ethereum!,
        rpc: [rpc, `ws://127.0.0.1:${options.anvilPort}`],
        chainId: ANVIL_CHAIN_ID,
        finalityDepth: 2,
        tokens: [...(base.chains.ethereum?.tokens ?? []), token as `0x${string}`],
      },
    },
  })
  // Anvil's chain is new on each start, so the embedded database is too: progress and trackings of a
  // previous chain would not match this one (the account and its key are put back below).
  const starting = waitForRpc(rpc, anvil.exited)
    .then(() => deployDevToken(rpc))
    .then(async (token) => ({ token, service: await createService(configOf(token), { freshDatabase: true }) }))
  // The service first (HTTP, workers, chain clients, database), then Anvil: with Anvil gone first,
  // the follower's WebSocket would be reconnecting to it while the service stops.
  const stopping = onStopSignals(async (signal) => {
    console.log(`paywatch dev: ${signal} received; stopping the service, then Anvil`)
    await (await starting.catch(() => undefined))?.service.close()
    await anvil.stop()
    console.log('paywatch dev: stopped (service and Anvil)')
  })
  // Started by a launcher (npx, npm, bin/paywatch.js) that is gone: stop as on SIGTERM, never run on orphaned.
  stopWhenOrphaned()
  const { token, service } = await starting.catch(async (error: unknown) => {
    await anvil.stop()
    throw error
  })
  if (stopping()) return
  await restoreDevAccount(service.database.db, identity)
  const address = await service.listen()
  const adminToken = service.common.config.adminToken!
  writeDevSession(dataDir, { api: address, apiKey: identity.apiKey, adminToken, rpc, token, pid: process.pid })
  console.log(devBanner({ address, rpc, token, adminToken, identity, dataDir }))
}

function devBanner(at: {
  address: string
  rpc: string
  token: string
  adminToken: string
  identity: { accountId: string; apiKey: string }
  dataDir: string
}): string {
  return [
    '',
    `paywatch dev: API ${at.address}, chain "ethereum" = local Anvil at ${at.rpc} (chain id ${ANVIL_CHAIN_ID})`,
    `  account id : ${at.identity.accountId} ("dev")`,
    `  API key    : ${at.identity.apiKey}   (the same on every start; kept in ${at.dataDir})`,
    `  admin token: ${at.adminToken}`,
    `  dashboard  : ${at.address}/dashboard   (sign in with the admin token)`,
    `  docs       : ${at.address}/docs`,
    `  token      : ${DEV_TOKEN.symbol} (ERC-20, ${DEV_TOKEN.decimals} decimals) at ${at.token}`,
    '',
    'First payment: in a second terminal, a callback receiver (examples/node-http.ts):',
    `  PAYWATCH_URL=${at.address} PAYWATCH_API_KEY=${at.identity.apiKey} npm run example:receiver`,
    'and in a third, a payment on this chain with its callback to that receiver:',
    '  npx paywatch dev pay                 (ETH; add --token for DUSD, --underpay for a failed payment,',
    '                                        --reorg for a payment a reorg removes)',
    'Stop with Ctrl-C (or kill this process): the service and Anvil stop with it; the chain starts fresh next time.',
    '',
  ].join('\n')
}

// Anvil runs in a process group of its own, so that a Ctrl-C (SIGINT to the terminal's foreground
// group) or `kill -- -pgid` reaches only paywatch, which stops it after the service. Being outside
// our group, it is ended by the watchdog shell when paywatch closes its stdin or dies in any way.
function startAnvil(port: number): { exited: Promise<number | null>; stop(): Promise<void> } {
  const child = spawn(
    '/bin/sh',
    [
      '-c',
      anvilWatchdogScript({ announcePid: false }),
      anvilBinary(),
      '--port',
      String(port),
      '--block-time',
      String(DEV_BLOCK_SECONDS),
      '--silent',
    ],
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
