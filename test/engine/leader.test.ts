// One node follows a chain at a time: a lease in the database that the follower renews. Another node
// takes it when it lapses (a frozen node), at once when the holder's connection is gone (a killed
// node) or when it is released (a graceful stop). Every write of the follower carries the lease's
// token: a node that lost the lease, even one that has not noticed yet, writes nothing more.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { parseEther } from 'viem'
import { chainLease } from '../../src/engine/leader-lock.ts'
import { acquireLease, findLease, LeadershipLostError } from '../../src/store/chain-leases.ts'
import { deleteChainBlocksAbove, loadChainWindow, saveChainBlock } from '../../src/store/chain-blocks.ts'
import { openDatabase, openDedicatedConnection, type Db } from '../../src/store/infrastructure/database.ts'
import { migrate } from '../../src/store/infrastructure/migrate.ts'
import { sendNative } from '../support/index.ts'
import { createFreshDatabaseUrl, dropDatabase, onPostgres, useTestDatabase } from '../support/database.ts'
import { useServicePair } from './lasting-services.ts'
import { createPayment, freshAddress, waitFor, waitForFinal } from './support.ts'

const block = (number: bigint) =>
  ({
    number,
    hash: `0x${number.toString(16).padStart(64, '0')}`,
    parentHash: `0x${(number - 1n).toString(16).padStart(64, '0')}`,
    timestamp: number,
  }) as Parameters<typeof saveChainBlock>[2]

describe('chain lease', () => {
  let db: Db
  useTestDatabase(async (opened) => {
    db = opened
  })

  test("a lapsed lease is taken over; the old holder's writes are refused and it learns it lost the lead", async () => {
    const stop = new AbortController()
    const a = chainLease({ db, chain: 'lapse', holder: 'node-a', exclusive: false, ttlMs: 60_000, renewMs: 20 })
    const leadA = (await a.acquire(stop.signal))!
    assert.ok(leadA)
    await saveChainBlock(db, 'lapse', block(1n), leadA.fence)
    assert.equal(await acquireLease(db, 'lapse', 'node-b', { ttlMs: 60_000, exclusive: false }), undefined, 'b waits while a holds it')

    // a froze past its lease (simulated on the database's clock): b takes over with a new token.
    await sql`UPDATE chain_leases SET expires_at = now() - interval '1 second' WHERE chain = 'lapse'`.execute(db)
    const tokenB = await acquireLease(db, 'lapse', 'node-b', { ttlMs: 60_000, exclusive: false })
    assert.equal(tokenB, String(Number(leadA.fence.token) + 1))

    await assert.rejects(saveChainBlock(db, 'lapse', block(2n), leadA.fence), LeadershipLostError)
    await assert.rejects(deleteChainBlocksAbove(db, 'lapse', 0n, leadA.fence), LeadershipLostError)
    assert.deepEqual(
      (await loadChainWindow(db, 'lapse')).map((b) => b.number),
      [1n],
      'nothing written after the take-over',
    )
    await saveChainBlock(db, 'lapse', block(2n), { chain: 'lapse', holder: 'node-b', token: tokenB! })

    await waitFor('a to notice (its renewal finds the lease gone)', async () => (leadA.lost.aborted ? true : undefined), 2_000)
    await a.release()
    assert.equal((await findLease(db, 'lapse'))?.holder, 'node-b', 'releasing a lost lease leaves the new holder alone')
    stop.abort()
  })

  test('a node whose timers ran late (it was frozen) gives up before renewing', async () => {
    let now = 0
    const a = chainLease({ db, chain: 'frozen', holder: 'node-a', exclusive: false, ttlMs: 10_000, renewMs: 10, now: () => now })
    const lead = (await a.acquire(new AbortController().signal))!
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(lead.lost.aborted, false, 'renewed while on time')
    now += 10_001
    await waitFor('the lead to be given up', async () => (lead.lost.aborted ? true : undefined), 2_000)
    await a.release()
  })

  test('a release hands over at once to a waiting node', async () => {
    const stop = new AbortController()
    const a = chainLease({ db, chain: 'handover', holder: 'node-a', exclusive: false, ttlMs: 60_000 })
    const b = chainLease({ db, chain: 'handover', holder: 'node-b', exclusive: false, ttlMs: 60_000, retryMs: 600_000 })
    assert.ok(await a.acquire(stop.signal))
    let leadB: Awaited<ReturnType<typeof b.acquire>>
    const waiting = b.acquire(stop.signal).then((lead) => (leadB = lead))
    await new Promise((resolve) => setTimeout(resolve, 200)) // b's first try is made (and found a holding it)
    assert.equal(leadB, undefined)
    await a.release()
    assert.equal(await findLease(db, 'handover'), undefined)
    b.wake() // what the release's NOTIFY does on PostgreSQL
    await waitFor('b to take over without waiting for its next try', async () => leadB, 2_000)
    await waiting
    stop.abort()
    await b.release()
  })

  test('the embedded database belongs to one process: a lease left by an earlier run is taken at once', async () => {
    assert.ok(await acquireLease(db, 'restart', 'earlier-run', { ttlMs: 60_000, exclusive: true }))
    assert.ok(await acquireLease(db, 'restart', 'this-run', { ttlMs: 60_000, exclusive: true }))
  })
})

describe('chain lease on PostgreSQL', onPostgres, () => {
  let url: string
  before(async () => {
    url = (await createFreshDatabaseUrl())!
    const database = await openDatabase({ databaseUrl: url, dataDir: 'memory://' })
    await migrate(database.db)
    await database.close()
  })
  after(async () => {
    if (url) await dropDatabase(url)
  })

  test("the holder's connection is gone (killed node): taken over at once, not at expiry", async () => {
    const stop = new AbortController()
    const dbA = openDedicatedConnection(url, 'lease-a')
    const dbB = openDedicatedConnection(url, 'lease-b')
    const a = chainLease({ db: dbA, chain: 'ethereum', holder: 'node-a', exclusive: false, ttlMs: 600_000 })
    const b = chainLease({ db: dbB, chain: 'ethereum', holder: 'node-b', exclusive: false, ttlMs: 600_000, retryMs: 20 })
    assert.ok(await a.acquire(stop.signal))
    let leadB: Awaited<ReturnType<typeof b.acquire>>
    const waiting = b.acquire(stop.signal).then((lead) => (leadB = lead))
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(leadB, undefined, 'b waits while a is alive')
    await sql`SELECT pg_terminate_backend(holder_pid) FROM chain_leases WHERE chain = 'ethereum'`.execute(dbB)
    await waitFor('b to take over', async () => leadB, 2_000)
    await waiting
    stop.abort()
    await Promise.all([a.release(), b.release()])
    await Promise.all([dbA.destroy(), dbB.destroy()])
  })
})

describe('two services on one database', onPostgres, () => {
  const pair = useServicePair()

  test('exactly one follows the chain; the other takes over at once when it stops', async () => {
    const { anvil, services } = pair
    const { leader, standby } = await pair.roles()
    assert.deepEqual(services.map((s) => s.engine.runner('ethereum')!.status).sort(), ['following', 'standby'])
    const { apiKey } = await standby.newAccount()
    const sender = anvil.accounts[1]!
    const receiver = freshAddress()
    const { request } = await createPayment(standby, apiKey, anvil, sender, { receiver, amount: '1', confirmations: 2 })
    services.splice(services.indexOf(leader), 1)
    await leader.close()
    await sendNative(anvil, sender, receiver, parseEther('1'))
    await sendNative(anvil, anvil.accounts[2]!, freshAddress(), 1n)

    await waitFor(
      'the standby to take over',
      async () => (standby.engine.runner('ethereum')!.status === 'following' ? true : undefined),
      5_000,
    )
    assert.equal((await waitForFinal(standby, apiKey, request.secret_id)).status, 'success')
  })
})
