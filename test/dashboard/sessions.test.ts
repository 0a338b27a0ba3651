// Dashboard sessions end when they should: a rotated admin token ends every session opened with the old
// one; "sign out all sessions" (dashboard and admin API) ends every browser's; a sign-out ends the live
// streams the session has open, on this node at once and, through the poll, for a sign-out elsewhere.
import assert from 'node:assert/strict'
import { get, type IncomingMessage } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createFreshDatabaseUrl, dropDatabase } from '../support/database.ts'
import { seedEmbeddedDataDir } from '../support/pglite-template.ts'
import { ADMIN_TOKEN, startTestService, type TestService } from '../support/service.ts'
import { listenOn } from './browser.ts'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

async function signIn(service: TestService, token = ADMIN_TOKEN): Promise<{ cookie: string; csrf: string }> {
  const signedIn = await service.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: FORM, payload: form({ token }) })
  assert.equal(signedIn.statusCode, 303)
  const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!
  const page = await service.app.inject({ method: 'GET', url: '/dashboard/accounts', headers: { cookie } })
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1]
  assert.ok(csrf)
  return { cookie, csrf }
}

const signedIn = async (service: TestService, cookie: string) =>
  (await service.app.inject({ method: 'GET', url: '/dashboard/accounts', headers: { cookie } })).statusCode === 200

/** Opens the overview's live stream over real HTTP; resolves once the stream has started. */
function openStream(baseUrl: string, cookie: string): Promise<{ response: IncomingMessage; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    get(`${baseUrl}/dashboard/events?topic=overview`, { headers: { cookie } }, (response) => {
      assert.equal(response.statusCode, 200)
      const ended = new Promise<void>((done) => {
        response.on('end', done)
        response.on('close', done)
      })
      response.once('data', () => resolve({ response, ended }))
      response.on('error', () => {})
    }).on('error', reject)
  })
}

let service: TestService
let baseUrl: string
before(async () => {
  service = await startTestService({ background: false })
  baseUrl = await listenOn(service)
})
after(async () => {
  await service?.close()
})

test('a session opened with the old admin token does not survive a rotation of PAYWATCH_ADMIN_TOKEN', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'paywatch-rotation-'))
  const databaseUrl = await createFreshDatabaseUrl()
  if (!databaseUrl) await seedEmbeddedDataDir(dataDir)
  const env = { PAYWATCH_DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  try {
    const before = await startTestService({ background: false, env })
    const { accountId } = await before.newAccount()
    const old = await signIn(before)
    assert.ok(await signedIn(before, old.cookie))
    await before.close()

    const rotated = await startTestService({
      background: false,
      env: { ...env, PAYWATCH_ADMIN_TOKEN: 'rotated-admin-token-fedcba9876543210' },
    })
    try {
      const page = await rotated.app.inject({ method: 'GET', url: '/dashboard/accounts', headers: { cookie: old.cookie } })
      assert.equal(page.statusCode, 303, 'the old cookie goes to the sign-in form')
      assert.equal(page.headers.location, '/dashboard/sign-in')
      const mint = await rotated.app.inject({
        method: 'POST',
        url: `/dashboard/accounts/${accountId}/api-keys`,
        headers: { cookie: old.cookie, ...FORM },
        payload: form({ csrf: old.csrf }),
      })
      assert.equal(mint.statusCode, 401, 'no API key is minted with the old session')
      assert.doesNotMatch(mint.body, /New API key/)
      const fresh = await signIn(rotated, 'rotated-admin-token-fedcba9876543210')
      assert.ok(await signedIn(rotated, fresh.cookie), 'the new token signs in')
    } finally {
      await rotated.close()
    }
  } finally {
    if (databaseUrl) await dropDatabase(databaseUrl)
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test('"Sign out all sessions" in the dashboard ends every session and their open streams', async () => {
  const mine = await signIn(service)
  const other = await signIn(service)
  const stream = await openStream(baseUrl, other.cookie)
  const page = await service.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie: mine.cookie } })
  assert.match(page.body, /Sign out all sessions/)
  const out = await service.app.inject({
    method: 'POST',
    url: '/dashboard/sign-out-all',
    headers: { cookie: mine.cookie, ...FORM },
    payload: form({ csrf: mine.csrf }),
  })
  assert.equal(out.statusCode, 303)
  assert.equal(out.headers.location, '/dashboard/sign-in?notice=signed-out-all')
  await stream.ended
  assert.equal(await signedIn(service, mine.cookie), false)
  assert.equal(await signedIn(service, other.cookie), false)
  const said = await service.app.inject({ method: 'GET', url: '/dashboard/sign-in?notice=signed-out-all' })
  assert.match(said.body, /Every dashboard session is signed out/)
  const forged = await service.app.inject({
    method: 'POST',
    url: '/dashboard/sign-out-all',
    headers: { cookie: (await signIn(service)).cookie, ...FORM },
    payload: '',
  })
  assert.equal(forged.statusCode, 403, 'CSRF-protected like every POST')
})

test('DELETE /admin/dashboard-sessions signs every browser out, and an open stream ends at its next poll', async () => {
  const a = await signIn(service)
  const b = await signIn(service)
  const stream = await openStream(baseUrl, a.cookie)
  const refused = await service.app.inject({ method: 'DELETE', url: '/admin/dashboard-sessions' })
  assert.equal(refused.statusCode, 401, 'admin token required')
  const out = await service.admin({ method: 'DELETE', url: '/admin/dashboard-sessions' })
  assert.equal(out.statusCode, 204, out.body)
  // Not through this node's dashboard: the stream learns it by looking at the session again.
  await stream.ended
  assert.equal(await signedIn(service, a.cookie), false)
  assert.equal(await signedIn(service, b.cookie), false)
})

test('sign-out ends a live stream the session already has open', async () => {
  const { cookie, csrf } = await signIn(service)
  const stream = await openStream(baseUrl, cookie)
  const kept = await signIn(service)
  const keptStream = await openStream(baseUrl, kept.cookie)
  const out = await service.app.inject({
    method: 'POST',
    url: '/dashboard/sign-out',
    headers: { cookie, ...FORM },
    payload: form({ csrf }),
  })
  assert.equal(out.statusCode, 303)
  await stream.ended
  assert.equal(keptStream.response.complete, false, "another session's stream stays open")
  assert.ok(await signedIn(service, kept.cookie))
  keptStream.response.destroy()
})

test('a revoked key: the dashboard says what the service does (at once here, within 5 s on other nodes)', async () => {
  const { accountId } = await service.newAccount()
  const { cookie } = await signIn(service)
  const page = await service.app.inject({ method: 'GET', url: `/dashboard/accounts/${accountId}?notice=key-revoked`, headers: { cookie } })
  assert.match(page.body, /this node refuses it at once, every other node within 5 seconds/)
  assert.doesNotMatch(page.body, /stops working at once/)
})
