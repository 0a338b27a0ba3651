// npm run bench:tracking — the chain engine on a local Anvil with 1,000 / 10,000 / 100,000 pending
// trackings (inserted in bulk), blocks of ~200 transactions of which 10 pay a tracking (native and
// ERC-20; some named by hash, some traces; 2 of them wait for 3 confirmations).
//
// Per size: RPC calls per block, database queries per block, block processing time p50/p99 (from
// the block read to every judgement written), time from `evm_mine` to the status written (the
// follower is woken by newHeads over WebSocket), and RSS. The work per block must not grow with the
// number of pending trackings. BENCH_SIZES (default 1000,10000,100000) and BENCH_BLOCKS (default 30) change the run;
// BENCH_PROVIDERS (default 1) serves the chain through that many provider URLs of the same Anvil, and
// BENCH_QUORUM (default 1) sets the chain's quorum (bench/quorum.ts compares quorum 1 with 2 of 3).
// BENCH_TOKENS_ONLY=1: every payment and every background tracking is in the ERC-20 token (a shop taking
// USDC alone: no native trace is pending, so a block's logs serve the matching by receiver).
// BENCH_NONCELESS_PERCENT (default 0) of the bulk-inserted trackings are nonce-less (nonce NULL, a
// deadline, half of them without a sender; bench/bulk-pending.ts). BENCH_SCALE_REPORT=true prints after
// the largest size the table and index sizes, the bounded queries' p50/p99 with their plans, and on
// PostgreSQL bench:api's rates against an empty table and this one (bench/scale-report.ts). A million:
// BENCH_SIZES=1000,1000000 BENCH_NONCELESS_PERCENT=25 BENCH_SCALE_REPORT=true DATABASE_URL=… npm run bench:tracking
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { sql, type KyselyPlugin } from 'kysely'
import type { Counter } from 'prom-client'
import { encodeFunctionData, type Address, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import type { BlockProcessed } from '../src/engine/chain-processor.ts'
import { createChainEngine } from '../src/engine/chain-engine.ts'
import type { Tracking } from '../src/domain/tracking.ts'
import { insertTracking } from '../src/store/trackings.ts'
import { deployToken, startAnvil, testTokenAbi } from '../test/support/index.ts'
import { startTestService } from '../test/support/service.ts'
import { insertNoncelessPending, forgetOwedChecks } from './bulk-pending.ts'
import { scaleReport } from './scale-report.ts'

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number)
/**
 * The nonce-less mix (docs/api.md, "Payments without a nonce"), on unless BENCH_NONCELESS=0: half the
 * background trackings are traces without a nonce (a quarter without a sender), and a quarter of the
 * paying ones are found by receiver.
 */
const NONCELESS = process.env.BENCH_NONCELESS !== '0'
const BLOCKS_PER_SIZE = Number(process.env.BENCH_BLOCKS ?? 30)
const TXS_PER_BLOCK = 200
const MATCHES_PER_BLOCK = 10
const NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'
const PROVIDERS = Number(process.env.BENCH_PROVIDERS ?? 1)
const QUORUM = Number(process.env.BENCH_QUORUM ?? 1)
const NONCELESS_PERCENT = Number(process.env.BENCH_NONCELESS_PERCENT ?? 0)
const TOKENS_ONLY = process.env.BENCH_TOKENS_ONLY === '1'

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length
/** A random address (no key derivation: that would load the CPU the engine is measured on). */
const fresh = (): Address => `0x${randomBytes(20).toString('hex')}`

const anvil = await startAnvil({ noMining: true, extraArgs: ['--auto-impersonate', '--gas-limit', '100000000'] })
let rpcId = 0
async function batch<T>(calls: { method: string; params: unknown[] }[]): Promise<T[]> {
  const response = await fetch(anvil.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((call) => ({ jsonrpc: '2.0', id: ++rpcId, ...call }))),
  })
  const answers = (await response.json()) as { id: number; result?: T; error?: { message: string } }[]
  answers.sort((a, b) => a.id - b.id)
  for (const answer of answers) if (answer.error) throw new Error(answer.error.message)
  return answers.map((answer) => answer.result as T)
}

const service = await startTestService({
  background: false,
  // PGlite's shared_buffers as the operator set them (bench:memory compares their RSS).
  env: process.env.PAYWATCH_EMBEDDED_SHARED_BUFFERS_MB
    ? { PAYWATCH_EMBEDDED_SHARED_BUFFERS_MB: process.env.PAYWATCH_EMBEDDED_SHARED_BUFFERS_MB }
    : {},
  // Requests over HTTP, newHeads over WebSocket: Anvil's WebSocket answers to parallel requests
  // can wait ~40 ms each on TCP delayed ACKs (its socket does not set TCP_NODELAY).
  // Several providers: distinct URLs (a query string each) of the same node.
  chains: {
    ethereum: {
      rpc: [...Array.from({ length: PROVIDERS }, (_, i) => (i === 0 ? anvil.rpcUrl : `${anvil.rpcUrl}/?provider=${i + 1}`)), anvil.wsUrl],
      chainId: anvil.chainId,
      pollingIntervalMs: 60_000,
      quorum: QUORUM,
      maxHeadAgeSeconds: null,
    },
  },
})
try {
  console.log(
    `database: ${service.database.kind}; blocks of ${TXS_PER_BLOCK} transactions, ${MATCHES_PER_BLOCK} paying a tracking; ` +
      `RSS with the service started: ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB; ` +
      `${PROVIDERS} HTTP provider(s), quorum ${QUORUM}; shared_buffers ${service.config.embeddedSharedBuffersMb} MB`,
  )
  const token = (await deployToken(anvil, 'USD Coin', 'USDC', 6)).toLowerCase() as Address
  /** What the background trackings expect, and whether the i-th sender's payment is native. */
  const backgroundToken = TOKENS_ONLY ? token : NATIVE
  const paysNative = (i: number) => !TOKENS_ONLY && i % 2 === 0
  // The senders sign their own transactions (an impersonated transaction's signature is fake, and
  // the quorum checks the judged transaction's signature).
  const signers = Array.from({ length: TXS_PER_BLOCK }, () => privateKeyToAccount(generatePrivateKey()))
  const senders = signers.map((signer) => signer.address)
  const chainId = await anvil.publicClient.getChainId()
  const signed = async (i: number, nonce: number, tx: { to: Address; value?: bigint; data?: Hex }) => ({
    method: 'eth_sendRawTransaction',
    params: [
      await signers[i]!.signTransaction({
        chainId,
        type: 'eip1559',
        nonce,
        gas: tx.data ? 100_000n : 21_000n,
        maxFeePerGas: 10n ** 11n,
        maxPriorityFeePerGas: 10n ** 9n,
        ...tx,
      }),
    ],
  })
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
  const { accountId } = await service.newAccount('bench')

  // The engine on a query-counting view of the database.
  let queries = 0
  // Counted as they return: a builder composed into a larger statement is transformed, but not run.
  const counting: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      queries++
      return args.result
    },
  }
  // Waiting is event-driven (no busy loop competing with the engine for the CPU).
  const waiters = new Set<() => void>()
  const wake = () => {
    for (const waiter of waiters) waiter()
  }
  const processed = new Map<bigint, BlockProcessed>()
  const completedAt = new Map<string, number>()
  service.events.on('completed', (tracking: Tracking) => {
    completedAt.set(tracking.id, performance.now())
    wake()
  })
  const engine = createChainEngine(
    service.common,
    {
      database: { ...service.database, db: service.database.db.withPlugin(counting) },
      chains: service.chains,
      events: service.events,
      fallbackReadiness: async () => [],
    },
    {
      onBlockProcessed: (info) => {
        processed.set(info.number, info)
        wake()
      },
    },
  )
  await engine.start()
  const rpcCalls = async () => {
    const metric = service.common.metrics.registry.getSingleMetric('paywatch_rpc_requests_total') as Counter
    return (await metric.get()).values.reduce((sum, v) => sum + v.value, 0)
  }
  const waitUntil = (what: string, check: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(waiter)
        reject(new Error(`timed out waiting for ${what}`))
      }, 30_000)
      const waiter = () => {
        if (!check()) return
        clearTimeout(timer)
        waiters.delete(waiter)
        resolve()
      }
      waiters.add(waiter)
      waiter()
    })
  while (engine.runner('ethereum')?.follower?.state.head === undefined) await new Promise((resolve) => setTimeout(resolve, 10))
  /** The follower records a block (one more query) right after the engine processed it. */
  const recorded = async (number: bigint) => {
    while (engine.runner('ethereum')!.follower!.state.head!.number < number) await new Promise((resolve) => setTimeout(resolve, 1))
  }

  let pending = 0
  let nonce = 0
  let matchSerial = 0
  const rows: string[][] = []
  for (const size of SIZES) {
    // Bulk insert of non-matching pending trackings: random senders, half named by a random hash.
    const nonceless = Math.round(((size - pending) * NONCELESS_PERCENT) / 100)
    await insertNoncelessPending(service.database.db, { accountId, count: nonceless, tag: String(size), token: backgroundToken })
    const missing = size - pending - nonceless
    await sql`
      INSERT INTO trackings (id, account_id, secret_id, shape, blockchain, sender, nonce, receiver, token, decimals,
        commitment, confirmations, after_block, amount, transaction, status, created_at, updated_at, nonceless, deadline)
      SELECT md5('id' || g || ${size}), ${accountId}, md5('secret' || g || ${size}), 'current', 'ethereum',
        CASE WHEN ${NONCELESS} AND g % 4 = 1 THEN NULL
          ELSE '0x' || substr(md5('s' || g || ${size}), 1, 32) || substr(md5('t' || g || ${size}), 1, 8) END,
        CASE WHEN ${NONCELESS} AND g % 2 = 1 THEN NULL ELSE g % 100 END,
        '0x' || substr(md5('r' || g), 1, 32) || substr(md5('q' || g), 1, 8), ${backgroundToken}, 18, 'confirmed', 1, 0, '1',
        CASE WHEN g % 2 = 0 THEN '0x' || md5('h' || g || ${size}) || md5('k' || g || ${size}) END, 'pending',
        date_trunc('milliseconds', now()), now(),
        ${NONCELESS} AND g % 2 = 1, CASE WHEN ${NONCELESS} AND g % 2 = 1 THEN 4102444800 END
      FROM generate_series(1, ${missing}::int) AS g`.execute(service.database.db)
    await forgetOwedChecks(service.database.db)
    // As autovacuum would after a bulk insert: statistics, and the visibility map index-only scans need.
    await sql`VACUUM ANALYZE trackings`.execute(service.database.db)
    pending = size

    const rpcPerBlock: number[] = []
    const queriesPerBlock: number[] = []
    const processing: number[] = []
    const minedToWritten: number[] = []
    for (let b = 0; b < BLOCKS_PER_SIZE; b++) {
      const payers = new Set(Array.from({ length: MATCHES_PER_BLOCK }, (_, j) => (b * MATCHES_PER_BLOCK + j * 17) % TXS_PER_BLOCK))
      const receivers = new Map<number, Address>()
      const calls = await Promise.all(
        senders.map((_, i) => {
          if (!payers.has(i)) return signed(i, nonce, { to: fresh(), value: 1n })
          const receiver = fresh()
          receivers.set(i, receiver)
          return paysNative(i)
            ? signed(i, nonce, { to: receiver, value: 10n ** 16n })
            : signed(i, nonce, {
                to: token,
                data: encodeFunctionData({ abi: testTokenAbi, functionName: 'transfer', args: [receiver, 1_000_000n] }),
              })
        }),
      )
      const hashes = await batch<Hex>(calls)
      // The paying trackings, stored as POST /v2/payments would (no fast path: they are not mined yet).
      const now = new Date()
      const matching: Tracking[] = [...receivers].map(([i, receiver], k) => ({
        id: `bench-match-${++matchSerial}`,
        accountId,
        secretId: `bench-match-${matchSerial}`,
        shape: 'current',
        blockchain: 'ethereum',
        // The nonce-less mix: every fourth paying tracking is a trace found by receiver, every eighth without a sender.
        sender: NONCELESS && k % 8 === 7 ? null : senders[i]!.toLowerCase(),
        nonce: NONCELESS && k % 4 === 3 ? null : BigInt(nonce),
        receiver: receiver.toLowerCase(),
        token: paysNative(i) ? NATIVE : token,
        decimals: paysNative(i) ? 18 : 6,
        commitment: 'confirmed',
        confirmations: k < 2 ? 3 : 1,
        afterBlock: 0n,
        deadline: NONCELESS && k % 4 === 3 ? 4102444800n : null,
        nonceless: NONCELESS && k % 4 === 3,
        amount: paysNative(i) ? '0.01' : '1',
        feeAmount: null,
        feeReceiver: null,
        transaction: k % 2 === 0 ? hashes[i]!.toLowerCase() : null,
        payload: null,
        callback: 'https://merchant.example/cb',
        forwardTo: null,
        forwardOnFailure: false,
        integrationId: null,
        linkId: null,
        shop: null,
        shopifyPaymentId: null,
        status: 'pending',
        failedReason: null,
        release: false,
        confirmedAt: null,
        createdAt: now,
        updatedAt: now,
      }))
      await Promise.all(matching.map((tracking) => insertTracking(service.database.db, tracking)))
      const immediate = matching.filter((m) => m.confirmations === 1).map((m) => m.id)

      const rpcBefore = await rpcCalls()
      const queriesBefore = queries
      const minedAt = performance.now()
      await anvil.rpc('evm_mine')
      const number = await anvil.publicClient.getBlockNumber()
      await waitUntil(`block ${number}`, () => processed.has(number) && immediate.every((id) => completedAt.has(id)))
      await recorded(number)
      rpcPerBlock.push((await rpcCalls()) - rpcBefore)
      queriesPerBlock.push(queries - queriesBefore)
      processing.push(processed.get(number)!.ms)
      minedToWritten.push(Math.max(...immediate.map((id) => completedAt.get(id)!)) - minedAt)
      nonce++
    }
    // Blocks without any payment (the common case): the fixed cost of a block. The first two also
    // confirm the last paying blocks' 3-confirmation trackings and are left out.
    const quiet: { rpc: number; queries: number; ms: number }[] = []
    for (let b = 0; b < 12; b++) {
      await batch(await Promise.all(senders.map((_, i) => signed(i, nonce, { to: fresh(), value: 1n }))))
      const rpcBefore = await rpcCalls()
      const queriesBefore = queries
      await anvil.rpc('evm_mine')
      const number = await anvil.publicClient.getBlockNumber()
      await waitUntil(`block ${number}`, () => processed.has(number))
      await recorded(number)
      if (b >= 2) quiet.push({ rpc: (await rpcCalls()) - rpcBefore, queries: queries - queriesBefore, ms: processed.get(number)!.ms })
      nonce++
    }
    const pendingNow = await service.database.db
      .selectFrom('trackings')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow()
    const rss = process.memoryUsage().rss / 2 ** 20
    // Also after a full collection when run with --expose-gc: what is retained, not garbage not yet collected.
    ;(globalThis as { gc?: () => void }).gc?.()
    const retained = process.memoryUsage()
    rows.push([
      size.toLocaleString('en'),
      pendingNow.n,
      mean(rpcPerBlock).toFixed(1),
      mean(queriesPerBlock).toFixed(1),
      percentile(processing, 50).toFixed(1),
      percentile(processing, 99).toFixed(1),
      percentile(minedToWritten, 50).toFixed(1),
      percentile(minedToWritten, 99).toFixed(1),
      rss.toFixed(0),
      (retained.rss / 2 ** 20).toFixed(0),
      (retained.heapUsed / 2 ** 20).toFixed(0),
      (retained.external / 2 ** 20).toFixed(0),
      mean(quiet.map((q) => q.rpc)).toFixed(1),
      mean(quiet.map((q) => q.queries)).toFixed(1),
      percentile(
        quiet.map((q) => q.ms),
        50,
      ).toFixed(1),
    ])
    console.log(`${size.toLocaleString('en')} pending: done`)
  }
  const header = [
    'pending',
    'pending now',
    'RPC calls/block',
    'DB queries/block',
    'processing p50 ms',
    'p99 ms',
    'mined→written p50 ms',
    'p99 ms',
    'RSS MB',
    'RSS after GC MB',
    'heap used MB',
    'external MB',
    'no-payment block: RPC calls',
    'DB queries',
    'processing p50 ms',
  ]
  console.log()
  console.log(`| ${header.join(' | ')} |`)
  console.log(`|${header.map(() => '---').join('|')}|`)
  for (const row of rows) console.log(`| ${row.join(' | ')} |`)
  const smallest = rows[0]!
  const largest = rows.at(-1)!
  console.log()
  const ratio = (column: number) => (Number(largest[column]) / Number(smallest[column])).toFixed(2)
  console.log(
    `ratio ${largest[0]} vs ${smallest[0]} pending: RPC calls/block ×${ratio(2)}, DB queries/block ×${ratio(3)}, ` +
      `processing p50 ×${ratio(4)}`,
  )
  if (process.env.BENCH_SCALE_REPORT === 'true')
    await scaleReport({
      db: service.database.db,
      kind: service.database.kind,
      databaseUrl: service.config.databaseUrl,
      accountId,
      chain: 'ethereum',
      rpc: { rpcUrl: anvil.rpcUrl, chainId: anvil.chainId },
    })
  await engine.stop()
} finally {
  await service.close()
  await anvil.stop()
}
