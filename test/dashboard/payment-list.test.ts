// The dashboard's payment list (no browser needed): search by secret_id, sender and transaction,
// filters, and keyset paging that neither skips nor repeats a payment.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { SEARCH_WINDOW } from '../../src/store/dashboard-payments.ts'
import { insertTrackings } from '../../src/store/trackings.ts'
import { ADMIN_TOKEN, startTestService, type TestService } from '../support/service.ts'
import { testTracking } from '../support/trackings.ts'

let service: TestService
let cookie: string
let accountA: string
let accountB: string
const t0 = Date.UTC(2026, 10, 1)

before(async () => {
  service = await startTestService({ background: false })
  accountA = (await service.newAccount('A')).accountId
  accountB = (await service.newAccount('B')).accountId
  // 70 payments of A (several sharing one creation time, to page across ties) and 5 of B.
  const rows = Array.from({ length: 70 }, (_, i) =>
    testTracking(accountA, {
      secretId: `a-${i}`,
      nonce: BigInt(i),
      createdAt: new Date(t0 + Math.floor(i / 3) * 1000),
      status: i % 7 === 0 ? 'failed' : 'pending',
    }),
  )
  rows.push(
    ...Array.from({ length: 5 }, (_, i) => testTracking(accountB, { secretId: `b-${i}`, nonce: BigInt(i), createdAt: new Date(t0 + i) })),
  )
  await insertTrackings(service.database.db, rows)
  const signedIn = await service.app.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `token=${ADMIN_TOKEN}`,
  })
  cookie = String(signedIn.headers['set-cookie']).split(';')[0]!
})
after(async () => {
  await service?.close()
})

async function list(query: string): Promise<{ secrets: string[]; older: string | undefined }> {
  const page = await service.app.inject({ method: 'GET', url: `/dashboard/payments${query}`, headers: { cookie } })
  assert.equal(page.statusCode, 200)
  const secrets = [...page.body.matchAll(/<a href="\/dashboard\/payments\/([^"?]+)">/g)].map((m) => decodeURIComponent(m[1]!))
  const older = /<a href="(\/dashboard\/payments\?[^"]*before=[^"]*)">Older<\/a>/.exec(page.body)?.[1]?.replaceAll('&amp;', '&')
  return { secrets, older }
}

test('pages of 50, newest first, follow each other without a gap or a repeat', async () => {
  const first = await list(`?account=${accountA}`)
  assert.equal(first.secrets.length, 50)
  assert.equal(first.secrets[0], 'a-69')
  assert.ok(first.older)
  const second = await list(first.older!.slice('/dashboard/payments'.length))
  assert.equal(second.secrets.length, 20)
  assert.equal(second.older, undefined)
  const all = [...first.secrets, ...second.secrets]
  assert.equal(new Set(all).size, 70)
  assert.deepEqual(all.toSorted(), Array.from({ length: 70 }, (_, i) => `a-${i}`).toSorted())
})

test('search by secret_id, sender or transaction, across accounts; filters by status and account', async () => {
  assert.deepEqual((await list('?q=b-3')).secrets, ['b-3'])
  const stored = await service.database.db
    .selectFrom('trackings')
    .select(['sender', 'transaction'])
    .where('secret_id', '=', 'a-5')
    .executeTakeFirstOrThrow()
  assert.deepEqual((await list(`?q=${stored.sender!.toUpperCase().replace('0X', '0x')}`)).secrets, ['a-5'])
  assert.deepEqual((await list(`?q=${stored.transaction}`)).secrets, ['a-5'])
  assert.deepEqual((await list('?q=nothing-like-this')).secrets, [])
  const failed = await list(`?status=failed&account=${accountA}`)
  assert.deepEqual(failed.secrets.toSorted(), ['a-0', 'a-14', 'a-21', 'a-28', 'a-35', 'a-42', 'a-49', 'a-56', 'a-63', 'a-7'].toSorted())
  assert.equal((await list(`?account=${accountB}`)).secrets.length, 5)
  assert.equal((await list('?chain=ethereum&status=failed')).secrets.length, 10)
})

test('search input is escaped back into the page', async () => {
  const page = await service.app.inject({
    method: 'GET',
    url: '/dashboard/payments?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E',
    headers: { cookie },
  })
  assert.doesNotMatch(page.body, /<script>alert/)
  assert.match(page.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
})

test('a payment without a nonce or sender: the list and its page show it with its deadline, without crashing', async () => {
  await insertTrackings(service.database.db, [
    testTracking(accountB, { secretId: 'nonceless-1', sender: null, nonce: null, nonceless: true, deadline: 1_900_000_000n }),
  ])
  assert.deepEqual((await list('?q=nonceless-1')).secrets, ['nonceless-1'])
  const page = await service.app.inject({ method: 'GET', url: '/dashboard/payments/nonceless-1', headers: { cookie } })
  assert.equal(page.statusCode, 200)
  assert.match(page.body, /no nonce: found by receiver/)
  assert.match(page.body, /<dt>Deadline<\/dt><dd>2030-03-17T17:46:40\.000Z<\/dd>/)
  assert.match(page.body, /waiting for a payment to/)
  assert.match(page.body, /&quot;deadline&quot;: 1900000000/)
  assert.match(page.body, /&quot;nonce&quot;: null/)
})

test('a filter without an index of its own searches a bounded window per page, and Older searches on', async () => {
  // 3 payments on another chain, then more than one window of newer payments (account C) above them.
  const { accountId: accountC } = await service.newAccount('C')
  const t1 = t0 + 1_000_000
  await insertTrackings(
    service.database.db,
    Array.from({ length: 3 }, (_, i) =>
      testTracking(accountC, { secretId: `old-polygon-${i}`, blockchain: 'polygon', createdAt: new Date(t1 + i) }),
    ),
  )
  await insertTrackings(
    service.database.db,
    Array.from({ length: SEARCH_WINDOW + 10 }, (_, i) =>
      testTracking(accountC, { secretId: `c-${i}`, nonce: BigInt(i), createdAt: new Date(t1 + 1_000 + i) }),
    ),
  )
  const first = await list('?chain=polygon')
  assert.deepEqual(first.secrets, [])
  assert.ok(first.older, 'a page that searched its whole window links to the next one')
  const second = await list(first.older!.slice('/dashboard/payments'.length))
  assert.deepEqual(second.secrets, ['old-polygon-2', 'old-polygon-1', 'old-polygon-0'])
  // The same with a lead (the account) and a filter beside it (the status).
  const pendingPolygon = await list(`?account=${accountC}&chain=polygon&status=pending`)
  assert.deepEqual(pendingPolygon.secrets, [])
  assert.equal((await list(pendingPolygon.older!.slice('/dashboard/payments'.length))).secrets.length, 3)
})
