import { randomUUID } from 'node:crypto'
import { createPublicClient, createWalletClient, http, parseEther, parseUnits, type Address, type Hash } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { anvil as anvilChain } from 'viem/chains'
import { readDevSession, type DevSession } from './dev-session.ts'
import { DEV_TOKEN, devTokenAbi, PAYEE, PAYER_KEY } from './dev-token.ts'

const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
const WAIT_MS = 60_000

export interface DevPayOptions {
  amount: string
  callback: string
  /** Pay in the dev ERC-20 (DUSD) instead of ETH. */
  token?: boolean
  /** Send half the amount: the payment fails and its callback says so. */
  underpay?: boolean
  /** Remove the payment's block by a reorg (anvil_reorg) once the service saw it, before it is final. */
  reorg?: boolean
}

/**
 * `paywatch dev pay`: one payment on the dev chain, end to end. It registers a payment from Anvil's
 * account #1 to #2 with the dev account's key (and the given callback), sends it, and prints each step
 * until the callback was answered (or, with --reorg, until the reorg left the payment waiting).
 */
export async function devPay(dataDir: string, options: DevPayOptions): Promise<void> {
  const session = readDevSession(dataDir)
  const payer = privateKeyToAccount(PAYER_KEY)
  const chain = { ...anvilChain, rpcUrls: { default: { http: [session.rpc] } } }
  const reader = createPublicClient({ chain, transport: http(session.rpc), pollingInterval: 100 })
  const wallet = createWalletClient({ account: payer, chain, transport: http(session.rpc) })
  const api = apiOf(session)
  const token = options.token ? (session.token as Address) : NATIVE
  const unit = options.token ? DEV_TOKEN.symbol : 'ETH'

  const secretId = randomUUID()
  const nonce = await reader.getTransactionCount({ address: payer.address })
  await api('POST', '/v2/payments', {
    blockchain: 'ethereum',
    sender: payer.address,
    nonce: String(nonce),
    after_block: String(await reader.getBlockNumber()),
    receiver: PAYEE,
    token,
    amount: options.amount,
    secret_id: secretId,
    callback: options.callback,
    // Final only 2 blocks deep (dev's finality depth): time for the reorg to remove it first.
    ...(options.reorg ? { commitment: 'finalized' } : {}),
  })
  console.log(`payment ${secretId} registered: ${options.amount} ${unit} from ${payer.address} to ${PAYEE}`)
  const sent = options.underpay ? halfOf(options.amount) : options.amount
  const hash = options.token
    ? await wallet.writeContract({
        address: token,
        abi: devTokenAbi,
        functionName: 'transfer',
        args: [PAYEE, parseUnits(sent, DEV_TOKEN.decimals)],
        nonce,
      })
    : await wallet.sendTransaction({ to: PAYEE, value: parseEther(sent), nonce })
  console.log(`sent transaction ${hash}: ${sent} ${unit}${options.underpay ? ` (underpaid: ${options.amount} expected)` : ''}`)

  if (options.reorg) return reorgAway(session, reader, api, secretId, hash)
  const record = await until(`payment ${secretId} still pending`, async () => {
    const current = await api('GET', `/v2/payments/${secretId}`)
    return current.status !== 'pending' && current
  })
  console.log(
    `payment ${record.status}${record.failed_reason ? ` (${record.failed_reason})` : ''} after ${record.confirmations} confirmation(s)`,
  )
  const delivery = await until(`no callback attempt for ${secretId}`, async () => {
    const [first] = (await api('GET', `/v2/payments/${secretId}/deliveries`)).deliveries as Record<string, any>[]
    return first?.attempts?.[0] && first
  })
  const attempt = delivery.attempts[0]
  console.log(
    `callback to ${options.callback}: answered ${attempt.status_code ?? attempt.error} (delivery ${delivery.id}, ${delivery.state})`,
  )
}

/** Waits until the service saw the transaction, then replaces its block (and any after it) by a reorg. */
async function reorgAway(
  session: DevSession,
  reader: ReturnType<typeof createPublicClient>,
  api: ReturnType<typeof apiOf>,
  secretId: string,
  hash: Hash,
): Promise<void> {
  const receipt = await reader.waitForTransactionReceipt({ hash, timeout: WAIT_MS })
  await until(`the service did not see ${hash}`, async () => (await api('GET', `/v2/payments/${secretId}`)).transaction === hash)
  const head = await reader.getBlockNumber()
  const depth = Number(head - receipt.blockNumber) + 1
  await rpc(session.rpc, 'anvil_reorg', [depth, []])
  console.log(`reorg: blocks ${receipt.blockNumber}..${head} replaced; transaction ${hash} is no longer on the chain`)
  // The service follows the new chain: the tracking forgets the transaction and waits for a payment again.
  const record = await until(`payment ${secretId} still shows ${hash}`, async () => {
    const current = await api('GET', `/v2/payments/${secretId}`)
    return current.transaction !== hash && current
  })
  console.log(`payment ${record.status}: its transaction was removed by the reorg; the tracking waits for a new one`)
}

function apiOf(session: DevSession) {
  return async (method: string, path: string, body?: unknown): Promise<Record<string, any>> => {
    const response = await fetch(`${session.api}${path}`, {
      method,
      headers: { 'x-api-key': session.apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const json = (await response.json()) as Record<string, any>
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${json.detail ?? JSON.stringify(json)}`)
    return json
  }
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const answer = (await response.json()) as { result?: unknown; error?: { message: string } }
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`)
  return answer.result
}

/** Half of a decimal amount, as a decimal string (exact: at most one more decimal place). */
function halfOf(amount: string): string {
  const [whole = '0', fraction = ''] = amount.split('.')
  const scaled = BigInt(whole + fraction) * 5n
  const digits = scaled.toString().padStart(fraction.length + 2, '0')
  const point = digits.length - fraction.length - 1
  return `${digits.slice(0, point)}.${digits.slice(point)}`.replace(/\.?0+$/, '')
}

async function until<T>(failure: string, probe: () => Promise<T | false | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`${failure} after ${WAIT_MS / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}
