import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Config } from '../config/config.ts'
import { createAccount } from '../store/accounts.ts'
import { createApiKey } from '../store/api-keys.ts'
import { createService } from '../service.ts'

const ANVIL_CHAIN_ID = 31337

/**
 * A local playground: a fresh Anvil node stands in for `ethereum`, the service runs on an embedded
 * database of its own, and an account with an API key is created and printed.
 */
export async function dev(base: Config, options: { anvilPort: number }): Promise<void> {
  const anvilBin = createRequire(import.meta.url).resolve('@foundry-rs/anvil-linux-amd64/bin/anvil')
  const anvil = spawn(anvilBin, ['--port', String(options.anvilPort), '--block-time', '2', '--silent'], { stdio: 'inherit' })
  const rpc = `http://127.0.0.1:${options.anvilPort}`
  await waitForRpc(rpc)

  // Requests over HTTP; the WebSocket URL only wakes the follower on each new block (newHeads).
  const config: Config = {
    ...base,
    dataDir: base.databaseUrl ? base.dataDir : join(base.dataDir, 'dev'),
    adminToken: base.adminToken ?? 'dev-admin-token',
    allowPrivateCallbacks: true,
    chains: { ...base.chains, ethereum: { ...base.chains.ethereum!, rpc: [rpc, `ws://127.0.0.1:${options.anvilPort}`], chainId: ANVIL_CHAIN_ID, finalityDepth: 2 } },
  }
  const service = await createService(config)
  const account = await createAccount(service.database.db, 'dev')
  const key = await createApiKey(service.database.db, account.id)
  const stop = async () => {
    await service.close()
    anvil.kill()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop())
  process.on('SIGINT', () => void stop())
  const address = await service.listen()
  console.log(
    [
      '',
      `paywatch dev: API ${address}, chain "ethereum" = local Anvil at ${rpc} (chain id ${ANVIL_CHAIN_ID})`,
      `  account id : ${account.id}`,
      `  API key    : ${key.key}`,
      `  admin token: ${config.adminToken}`,
      `  docs       : ${address}/docs`,
      '',
    ].join('\n'),
  )
}

async function waitForRpc(url: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      const response = await fetch(url, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      })
      if (response.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`anvil did not start at ${url}`)
}
