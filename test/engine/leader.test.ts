// One node follows a chain at a time: a PostgreSQL advisory lock on a dedicated connection. When the
// leader stops or its connection dies, another node takes over within seconds. (On the embedded
// database there is a single process, which always leads.)
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { parseEther } from 'viem'
import { postgresAdvisoryLock, singleProcessLock } from '../../src/chain/leader-lock.ts'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import { createFreshDatabaseUrl, dropDatabase, onPostgres } from '../support/database.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, freshAddress, startEngineService, waitFor, waitForFinal } from './support.ts'


test('embedded database: the single process always leads', async () => {
  const lock = singleProcessLock()
  const lead = await lock.acquire(new AbortController().signal)
  assert.ok(lead)
  assert.equal(lead.lost.aborted, false)
  await lock.release()
  assert.equal(lead.lost.aborted, true)
})

describe('PostgreSQL advisory lock', onPostgres, () => {
  let url: string

  before(async () => {
    url = (await createFreshDatabaseUrl())!
  })
  after(async () => {
    if (url) await dropDatabase(url)
  })

  test('a second node waits, and takes over when the leader releases or its connection dies', async () => {
    const stop = new AbortController()
    const a = postgresAdvisoryLock(url, 'ethereum', { retryMs: 50, heartbeatMs: 100 })
    const b = postgresAdvisoryLock(url, 'ethereum', { retryMs: 50, heartbeatMs: 100 })
    const other = postgresAdvisoryLock(url, 'bsc', { retryMs: 50 })
    const leadA = await a.acquire(stop.signal)
    assert.ok(leadA)
    assert.ok(await other.acquire(stop.signal), 'another chain has its own lock')

    let bLead: Awaited<ReturnType<typeof b.acquire>>
    const bWaiting = b.acquire(stop.signal).then((lead) => (bLead = lead))
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal(bLead, undefined, 'b waits while a leads')

    await a.release()
    assert.equal(leadA.lost.aborted, true)
    await waitFor('b to take over', async () => bLead, 2_000)
    await bWaiting

    // The leader's session dies (a crashed node): its lock goes with it.
    const aAgain = a.acquire(stop.signal)
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'paywatch-follower-ethereum'
      AND pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)`)
    await admin.end()
    await waitFor('b to notice it lost the lead', async () => (bLead!.lost.aborted ? true : undefined), 2_000)
    assert.ok(await aAgain, 'a leads again')
    stop.abort()
    await Promise.all([a.release(), b.release(), other.release()])
  })
})

describe('two services on one database', onPostgres, () => {
  let anvil: Anvil
  let url: string
  const services: TestService[] = []

  before(async () => {
    anvil = await startAnvil()
    url = (await createFreshDatabaseUrl())!
    for (let i = 0; i < 2; i++) services.push(await startEngineService(anvil, { env: { DATABASE_URL: url } }))
  })
  after(async () => {
    for (const service of services) await service.close()
    if (url) await dropDatabase(url)
    await anvil?.stop()
  })

  test('exactly one follows the chain; the other takes over when it stops', async () => {
    const statuses = () => services.map((s) => s.engine.runner('ethereum')!.status)
    await waitFor('one node to follow', async () => (statuses().includes('following') ? true : undefined))
    assert.deepEqual([...statuses()].sort(), ['following', 'standby'])
    const leader = services.find((s) => s.engine.runner('ethereum')!.status === 'following')!
    const standby = services.find((s) => s !== leader)!

    const { apiKey } = await standby.newAccount()
    const sender = anvil.accounts[1]!
    const receiver = freshAddress()
    const { request } = await createPayment(standby, apiKey, anvil, sender, { receiver, amount: '1', confirmations: 2 })
    await leader.close()
    services.splice(services.indexOf(leader), 1)
    await sendNative(anvil, sender, receiver, parseEther('1'))
    await sendNative(anvil, anvil.accounts[2]!, freshAddress(), 1n)

    const started = Date.now()
    await waitFor('the standby to take over', async () => (standby.engine.runner('ethereum')!.status === 'following' ? true : undefined))
    assert.ok(Date.now() - started < 5_000, 'takeover within seconds')
    assert.equal((await waitForFinal(standby, apiKey, request.secret_id)).status, 'success')
  })
})
