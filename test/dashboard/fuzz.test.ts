// No dashboard input produces a 5xx: every route the Fastify instance has under /dashboard (read from
// the instance, so a new route is covered the day it is added) gets odd path parameters, query strings
// and form fields, signed in, with the session's CSRF token: repeated parameters, NUL and lone
// surrogates, prototype names, times outside any calendar, overlong text. The cases the third audit
// found are asserted by name as well.
import assert from 'node:assert/strict'
import { get } from 'node:http'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { insertPending } from '../callbacks/support.ts'
import { ADMIN_TOKEN, startTestService, type TestService } from '../support/service.ts'
import { listenOn } from './browser.ts'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

interface Route {
  method: string
  url: string
}

/** The routes of the instance as `printRoutes` draws them (a tree of path pieces, four columns a level). */
export function routesOf(app: FastifyInstance): Route[] {
  const routes: Route[] = []
  const stack: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.+?)(?: \(([^)]*)\))?$/.exec(line)
    if (!match) continue
    const depth = match[1]!.length / 4
    const path = (stack[depth - 1] ?? '') + match[2]!
    stack[depth] = path
    stack.length = depth + 1
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) routes.push({ method, url: path })
  }
  return routes
}

/** A small deterministic PRNG: the same run every time, so a failure can be reproduced. */
function random(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

const ODD_VALUES = [
  '',
  ' ',
  'a\u0000b',
  '\ud800',
  'x'.repeat(5_000),
  '-271821-04-20T00:00:00',
  '+275760-09-13T00:00:00Z',
  '0000-01-01T00:00',
  '2026-02-30T00:00',
  '9999-12-31T23:59:59Z',
  '2026-11-26T10:00',
  'constructor',
  '__proto__',
  'hasOwnProperty',
  'valueOf',
  'toString',
  'payment:constructor',
  'overview',
  '../../etc/passwd',
  '%',
  '%zz',
  '<script>alert(1)</script>',
  'http://127.0.0.1:1/x',
  'https://example.com/hook',
  'not a url',
  '1e309',
  '-1',
  'on',
  'payments.shopify.read',
  '2026-11-26T10:00:00.000Z_x',
  '-271821-04-20T00:00:00.000Z_x',
]
const FIELD_NAMES = [
  'q',
  'status',
  'chain',
  'account',
  'before',
  'notice',
  'done',
  'count',
  'url',
  'topic',
  'name',
  'shop',
  'since',
  'scope',
  'account_id',
  'expires_at',
  'reversal_events',
  'app',
  'token',
  '__proto__',
  'constructor',
  'hasOwnProperty',
]

let service: TestService
let baseUrl: string
let session: { cookie: string; csrf: string }
const real: Record<string, string> = {}

async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const signedIn = await service.app.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    headers: FORM,
    payload: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
  })
  const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!
  const page = await service.app.inject({ method: 'GET', url: '/dashboard/accounts', headers: { cookie } })
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page.body)![1]! }
}

before(async () => {
  service = await startTestService({ background: false })
  baseUrl = await listenOn(service)
  const { accountId } = await service.newAccount('fuzzed')
  const app = await service.admin({ method: 'POST', url: `/admin/accounts/${accountId}/apps`, payload: { name: 'fuzz app' } })
  const tracking = await insertPending(service.database.db, accountId, {})
  Object.assign(real, { id: accountId, secretId: tracking.secretId, appId: app.json().id })
  session = await signIn()
})
after(async () => {
  await service?.close()
})

const pick = <T>(next: () => number, list: readonly T[]): T => list[Math.floor(next() * list.length)]!

const safeEncode = (value: string): string => {
  try {
    return encodeURIComponent(value)
  } catch {
    return '%ED%A0%80'
  }
}

/** A query string or form body of 1 to 4 fields, some of them repeated. */
function fields(next: () => number): string {
  const pairs: string[] = []
  const count = 1 + Math.floor(next() * 4)
  for (let i = 0; i < count; i++) {
    const name = pick(next, FIELD_NAMES)
    const value = pick(next, ODD_VALUES)
    pairs.push(`${safeEncode(name)}=${safeEncode(value)}`)
    if (next() < 0.3) pairs.push(`${safeEncode(name)}=${safeEncode(pick(next, ODD_VALUES))}`)
  }
  return pairs.join('&')
}

/** The path with its parameters filled: a real id now and then, an odd value otherwise. */
function fillPath(next: () => number, url: string): string {
  return url.replace(/:(\w+)/g, (_all, name: string) => {
    if (next() < 0.3) return encodeURIComponent(name === 'secretId' ? real.secretId! : url.includes('/apps/') ? real.appId! : real.id!)
    return safeEncode(pick(next, ODD_VALUES)).replace(/%2F/gi, '_') || 'x'
  })
}

/** The live stream answers with headers and then stays open: read the status, then hang up. */
function streamStatus(url: string, cookie: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = get(`${baseUrl}${url}`, { headers: { cookie } }, (response) => {
      resolve(response.statusCode!)
      response.destroy()
    })
    request.on('error', reject)
  })
}

async function send(method: string, url: string, body?: string): Promise<number> {
  // A sign-out ends the session it is sent with: those get a session of their own.
  const own = /sign-out/.test(url) ? await signIn() : session
  if (url.startsWith('/dashboard/events') && method === 'GET') return streamStatus(url, own.cookie)
  const res = await service.app.inject({
    method: method as 'GET' | 'POST',
    url,
    headers: { cookie: own.cookie, ...(method === 'POST' ? FORM : {}) },
    payload: method === 'POST' ? `csrf=${encodeURIComponent(own.csrf)}${body ? `&${body}` : ''}` : undefined,
  })
  assert.ok(
    res.statusCode < 500,
    `${method} ${url.slice(0, 200)} ${body?.slice(0, 200) ?? ''} → ${res.statusCode}: ${res.body.slice(0, 300)}`,
  )
  return res.statusCode
}

test('the routes are read from the instance: every dashboard page and form is there', () => {
  const routes = routesOf(service.app).filter((r) => r.url.startsWith('/dashboard') && r.method !== 'HEAD')
  const names = routes.map((r) => `${r.method} ${r.url}`)
  for (const known of [
    'GET /dashboard',
    'GET /dashboard/assets/:name',
    'GET /dashboard/payments',
    'GET /dashboard/payments/:secretId',
    'POST /dashboard/accounts/:id/integrations',
    'POST /dashboard/endpoints/recover',
    'GET /dashboard/events',
    'POST /dashboard/sign-out-all',
  ]) {
    assert.ok(names.includes(known), `${known} in ${names.join(', ')}`)
  }
  assert.ok(routes.length >= 25, `${routes.length} routes`)
})

test('the cases of the third audit answer 4xx (or a page), never 5xx', async () => {
  for (const name of ['constructor', '__proto__', 'hasOwnProperty', 'valueOf', 'toString']) {
    const asset = await service.app.inject({ method: 'GET', url: `/dashboard/assets/${name}` })
    assert.equal(asset.statusCode, 404, name)
    assert.notEqual(asset.headers['cache-control'], 'public, max-age=86400, immutable')
  }
  for (const url of [
    '/dashboard/payments?q=a&q=b',
    '/dashboard/payments?chain=a&chain=b',
    '/dashboard/payments?account=a&account=b',
    `/dashboard/accounts/${real.id}?notice=constructor`,
    `/dashboard/payments/${real.secretId}?notice=constructor`,
    `/dashboard/payments/${real.secretId}?notice=__proto__`,
    '/dashboard/payments?before=-271821-04-20T00:00:00.000Z_x',
  ]) {
    const status = await send('GET', url)
    assert.ok(status === 200 || status === 400, `${url} → ${status}`)
  }
  assert.equal(await send('GET', '/dashboard/events?topic=a&topic=b'), 400)
  assert.equal(await send('POST', '/dashboard/accounts', 'name=a%00b'), 400)
  assert.equal(await send('POST', `/dashboard/accounts/${real.id}/links`, 'name=a%00b'), 400)
  assert.equal(await send('POST', `/dashboard/accounts/${real.id}/integrations`, 'name=a%00b'), 400)
  const recovered = await send(
    'POST',
    '/dashboard/endpoints/recover',
    `account=${real.id}&url=https://example.com&since=-271821-04-20T00:00:00`,
  )
  assert.equal(recovered, 303, 'answered with the form again ("give the time")')
  const accounts = (await service.admin({ method: 'GET', url: '/admin/accounts' })).json<{ name: string }[]>()
  assert.ok(!accounts.some((a) => a.name.includes('\u0000')))
})

test('no fuzzed path, query or form on any dashboard route answers 5xx', async () => {
  const routes = routesOf(service.app).filter((r) => r.url.startsWith('/dashboard') && (r.method === 'GET' || r.method === 'POST'))
  const next = random(20261126)
  let sent = 0
  for (const route of routes) {
    for (let i = 0; i < 40; i++) {
      const url = fillPath(next, route.url)
      const query = fields(next)
      if (route.method === 'GET') await send('GET', `${url}?${query}`)
      else await send('POST', i % 4 === 0 ? `${url}?${query}` : url, fields(next))
      sent++
    }
  }
  assert.ok(sent >= 1_000, `${sent} requests`)
})
