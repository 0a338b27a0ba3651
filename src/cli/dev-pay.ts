import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPublicClient, createWalletClient, http, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { anvil as anvilChain } from 'viem/chains'

/** What a running `paywatch dev` tells later commands (`paywatch dev pay`): written in its data folder. */
export interface DevSession {
  api: string
  apiKey: string
  rpc: string
  pid: number
}

const SESSION_FILE = 'dev-session.json'
/** Anvil's well-known development accounts #1 (payer) and #2 (payee): funded on every fresh Anvil chain. */
const PAYER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'
const PAYEE = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'
const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'

export function writeDevSession(dataDir: string, session: DevSession): void {
  writeFileSync(join(dataDir, SESSION_FILE), `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 })
}

function readDevSession(dataDir: string): DevSession {
  try {
    return JSON.parse(readFileSync(join(dataDir, SESSION_FILE), 'utf8')) as DevSession
  } catch {
    throw new Error(`no running paywatch dev found in ${dataDir}: start \`npx paywatch dev\` first (same PAYWATCH_DATA_DIR)`)
  }
}

/**
 * `paywatch dev pay`: one payment on the dev chain, end to end. It registers a payment from Anvil's
 * account #1 to #2 with the dev account's key (and the given callback), sends it, and prints each step
 * until the callback was answered.
 */
export async function devPay(dataDir: string, options: { amount: string; callback: string; nonce?: boolean }): Promise<void> {
  const session = readDevSession(dataDir)
  const payer = privateKeyToAccount(PAYER_KEY)
  const chain = { ...anvilChain, rpcUrls: { default: { http: [session.rpc] } } }
  const reader = createPublicClient({ chain, transport: http(session.rpc) })
  const wallet = createWalletClient({ account: payer, chain, transport: http(session.rpc) })
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${session.api}${path}`, {
      method,
      headers: { 'x-api-key': session.apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const json = (await response.json()) as Record<string, any>
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${json.detail ?? JSON.stringify(json)}`)
    return json
  }

  const secretId = randomUUID()
  const nonce = await reader.getTransactionCount({ address: payer.address })
  await api('POST', '/v2/payments', {
    blockchain: 'ethereum',
    // `--no-nonce`: a payment without a nonce or sender, found by receiver (docs/api.md, "Payments without a nonce").
    ...(options.nonce === false ? {} : { sender: payer.address, nonce: String(nonce) }),
    after_block: String(await reader.getBlockNumber()),
    receiver: PAYEE,
    token: NATIVE,
    amount: options.amount,
    secret_id: secretId,
    callback: options.callback,
  })
  console.log(`payment ${secretId} registered: ${options.amount} ETH from ${payer.address} to ${PAYEE}`)
  const hash = await wallet.sendTransaction({ to: PAYEE, value: parseEther(options.amount), nonce })
  console.log(`sent transaction ${hash}`)

  const deadline = Date.now() + 60_000
  let record: Record<string, any>
  for (;;) {
    record = await api('GET', `/v2/payments/${secretId}`)
    if (record.status !== 'pending') break
    if (Date.now() > deadline) throw new Error(`payment ${secretId} still pending after 60 s`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  console.log(
    `payment ${record.status}${record.failed_reason ? ` (${record.failed_reason})` : ''} after ${record.confirmations} confirmation(s)`,
  )
  console.log(
    `record: transaction ${record.transaction ?? 'none'}, sender ${record.sender ?? 'none'}, nonce ${record.nonce ?? 'none'}, deadline ${record.deadline ?? 'none'}`,
  )
  for (;;) {
    const [delivery] = (await api('GET', `/v2/payments/${secretId}/deliveries`)).deliveries as Record<string, any>[]
    const attempt = delivery?.attempts?.[0]
    if (attempt) {
      console.log(
        `callback to ${options.callback}: answered ${attempt.status_code ?? attempt.error} (delivery ${delivery!.id}, ${delivery!.state})`,
      )
      return
    }
    if (Date.now() > deadline) throw new Error(`no callback attempt for ${secretId} within 60 s`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}
