import { randomUUID } from 'node:crypto'
import { createPublicClient, createWalletClient, http, parseEther, parseUnits, type Address, type Hash } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { anvil as anvilChain } from 'viem/chains'
import { DEV_BLOCK_SECONDS, readDevSession, type DevSession } from './dev-session.ts'
import { DEV_TOKEN, devTokenAbi, PAYEE, PAYER_KEY } from './dev-token.ts'

const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
const WAIT_MS = 60_000
/** `--no-nonce --underpay`: the deadline, in dev blocks from the latest. */
const UNDERPAID_DEADLINE_BLOCKS = 3

export interface DevPayOptions {
  amount: string
  callback: string
  /** Pay in the dev ERC-20 (DUSD) instead of ETH. */
  token?: boolean
  /** Send half the amount: the payment fails and its callback says so. */
  underpay?: boolean
  /** Remove the payment's block by a reorg (anvil_reorg) once the service saw it, before it is final. */
  reorg?: boolean
  /** false (`--no-nonce`): track it without a nonce or sender, found by receiver. */
  nonce?: boolean
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
  // An underpayment is not the payment of a tracking without a nonce (docs/api.md, "Payments without a
  // nonce"): it is passed over, and what fails such a tracking is its deadline, set here a few blocks ahead.
  const deadline =
    options.nonce === false && options.underpay
      ? (await reader.getBlock()).timestamp + BigInt(UNDERPAID_DEADLINE_BLOCKS * DEV_BLOCK_SECONDS)
      : undefined
  await api('POST', '/v2/payments', {
    blockchain: 'ethereum',
    // `--no-nonce`: a payment without a nonce or sender, found by receiver (docs/api.md, "Payments without a nonce").
    ...(options.nonce === false ? {} : { sender: payer.address, nonce: String(nonce) }),
    after_block: String(await reader.getBlockNumber()),
    receiver: PAYEE,
    token,
    amount: options.amount,
    secret_id: secretId,
    callback: options.callback,
    ...(deadline === undefined ? {} : { deadline: String(deadline) }),
    // Final only 2 blocks deep (dev's finality depth): time for the reorg to remove it first.
    ...(options.reorg ? { commitment: 'finalized' } : {}),
  })
  console.log(`payment ${secretId} registered: ${options.amount} ${unit} from ${payer.address} to ${PAYEE}`)
  const sent = options.underpay ? halfOf(options.amount) : options.amount
  const send = () =>
    options.token
      ? wallet.writeContract({
          address: token,
          abi: devTokenAbi,
          functionName: 'transfer',
          args: [PAYEE, parseUnits(sent, DEV_TOKEN.decimals)],
          nonce,
        })
      : wallet.sendTransaction({ to: PAYEE, value: parseEther(sent), nonce })
  const said = (hash: Hash) =>
    console.log(`sent transaction ${hash}: ${sent} ${unit}${options.underpay ? ` (underpaid: ${options.amount} expected)` : ''}`)
  if (options.reorg) return reorgAway(session, reader, api, secretId, send, said)
  said(await send())
  if (deadline !== undefined) {
    console.log(`without a nonce an underpayment is passed over: the payment fails once a block is past its deadline (${deadline})`)
  }

  const record = await until(`payment ${secretId} still pending`, async () => {
    const current = await api('GET', `/v2/payments/${secretId}`)
    return current.status !== 'pending' && current
  })
  console.log(
    `payment ${record.status}${record.failed_reason ? ` (${record.failed_reason})` : ''} after ${record.confirmations} confirmation(s)`,
  )
  console.log(
    `record: transaction ${record.transaction ?? 'none'}, sender ${record.sender ?? 'none'}, nonce ${record.nonce ?? 'none'}, deadline ${record.deadline ?? 'none'}`,
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

/**
 * The payment in a block of its own that a reorg then replaces: interval mining pauses (so that the block
 * does not become final meanwhile), the block is mined, the service sees the transaction, anvil_reorg
 * replaces that block by an empty one, and interval mining resumes.
 */
async function reorgAway(
  session: DevSession,
  reader: ReturnType<typeof createPublicClient>,
  api: ReturnType<typeof apiOf>,
  secretId: string,
  send: () => Promise<Hash>,
  said: (hash: Hash) => void,
): Promise<void> {
  await rpc(session.rpc, 'evm_setIntervalMining', [0])
  let hash: Hash
  try {
    hash = await send()
    said(hash)
    await rpc(session.rpc, 'evm_mine', [])
    const receipt = await reader.waitForTransactionReceipt({ hash, timeout: WAIT_MS })
    // The service has read the block once its follower's head (GET /readyz) reached it.
    await until(`the service did not read block ${receipt.blockNumber}`, async () => (await followedHead(session)) >= receipt.blockNumber)
    console.log(`the service read ${hash} in block ${receipt.blockNumber} (not final yet)`)
    await rpc(session.rpc, 'anvil_reorg', [1, []])
    console.log(`reorg: block ${receipt.blockNumber} replaced by an empty one; transaction ${hash} is no longer on the chain`)
  } finally {
    await rpc(session.rpc, 'evm_setIntervalMining', [DEV_BLOCK_SECONDS])
  }
  // The service follows the new chain past the replaced block: the tracking forgot the transaction.
  const replaced = await reader.getBlockNumber()
  await until(`the service did not follow the new chain`, async () => (await followedHead(session)) > replaced)
  const record = await api('GET', `/v2/payments/${secretId}`)
  console.log(
    record.status === 'pending'
      ? `payment pending: its transaction was removed by the reorg; the tracking waits for a new one`
      : `payment ${record.status}: it was final before the reorg`,
  )
}

/** The head block the service's follower of "ethereum" has read (GET /readyz). */
async function followedHead(session: DevSession): Promise<bigint> {
  const ready = (await (await fetch(`${session.api}/readyz`)).json()) as { chains?: { name: string; head?: string }[] }
  return BigInt(ready.chains?.find((chain) => chain.name === 'ethereum')?.head ?? -1)
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
