// Dashboard sign-in and its protections: wrong token refused with a message and throttled, the session
// cookie's flags, sign-out revoking the session, CSRF on every POST, no dashboard without an admin token.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ADMIN_TOKEN, startTestService, type TestService } from '../support/service.ts'
import { chromiumMissing, listenOn, openBrowser, screenshot } from './browser.ts'

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

let service: TestService
before(async () => {
  service = await startTestService({ background: false })
})
after(async () => {
  await service?.close()
})

/** Signs in through the form (inject); returns the cookie header and the session's CSRF token. */
async function session(): Promise<{ cookie: string; csrf: string }> {
  const signedIn = await service.app.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    headers: FORM,
    payload: form({ token: ADMIN_TOKEN }),
  })
  assert.equal(signedIn.statusCode, 303)
  const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!
  const overview = await service.app.inject({ method: 'GET', url: '/dashboard/accounts', headers: { cookie } })
  const csrf = /name="csrf" value="([^"]+)"/.exec(overview.body)?.[1]
  assert.ok(csrf, 'the page carries a CSRF token')
  return { cookie, csrf }
}

describe('in Chromium', { skip: chromiumMissing }, () => {
  test('a wrong token is refused with a clear message; the right one signs in with a strict, HttpOnly, expiring cookie', async () => {
    const baseUrl = await listenOn(service)
    const browser = await openBrowser()
    try {
      const { page, context } = browser
      await page.goto(`${baseUrl}/dashboard`)
      assert.equal(new URL(page.url()).pathname, '/dashboard/sign-in')
      await page.getByLabel('Admin token').fill('not-the-admin-token-at-all')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('alert').waitFor()
      assert.match(await page.getByRole('alert').innerText(), /not the admin token/)
      assert.deepEqual(await context.cookies(), [])
      await screenshot(page, 'sign-in-refused')

      // Signed in by keyboard alone: the token field has the focus, Enter sends the form.
      await page.keyboard.type(ADMIN_TOKEN)
      await page.keyboard.press('Enter')
      await page.waitForURL(`${baseUrl}/dashboard`)
      await page.getByRole('heading', { name: 'Overview' }).waitFor()
      const [cookie] = await context.cookies()
      assert.equal(cookie?.name, 'paywatch_dashboard')
      assert.equal(cookie.httpOnly, true)
      assert.equal(cookie.sameSite, 'Strict')
      assert.equal(cookie.path, '/dashboard')
      assert.equal(cookie.secure, false, 'served over plain http here; Secure is set over https')
      const hoursLeft = (cookie.expires * 1000 - Date.now()) / 3_600_000
      assert.ok(hoursLeft > 11 && hoursLeft <= 12, `the session expires in ${hoursLeft} h`)

      // The keyboard reaches everything: the first Tab lands on the skip link, which leads to the content.
      await page.keyboard.press('Tab')
      assert.equal(await page.evaluate('document.activeElement.textContent'), 'Skip to content')
      await page.keyboard.press('Enter')
      assert.equal(await page.evaluate('document.activeElement.id'), 'main')

      await page.getByRole('button', { name: 'Sign out', exact: true }).click()
      await page.waitForURL(`${baseUrl}/dashboard/sign-in`)
      assert.deepEqual(await context.cookies(), [])
    } finally {
      await browser.close()
    }
  })
})

test('sign-out revokes the session on the server: the old cookie no longer works', async () => {
  const { cookie, csrf } = await session()
  assert.equal((await service.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie } })).statusCode, 200)
  const signInAgain = await service.app.inject({ method: 'GET', url: '/dashboard/sign-in', headers: { cookie } })
  assert.equal(signInAgain.headers.location, '/dashboard', 'a signed-in browser skips the form')
  const out = await service.app.inject({
    method: 'POST',
    url: '/dashboard/sign-out',
    headers: { cookie, ...FORM },
    payload: form({ csrf }),
  })
  assert.equal(out.statusCode, 303)
  const again = await service.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie } })
  assert.equal(again.statusCode, 303)
  assert.equal(again.headers.location, '/dashboard/sign-in')
})

test('CSRF: a POST without the session token, with a wrong one or from another origin is refused and changes nothing', async () => {
  const { cookie, csrf } = await session()
  const accountsBefore = (await service.admin({ method: 'GET', url: '/admin/accounts' })).json().length
  // Its last character changed, to one it is not (a token ending in "x" once made "x" the right token).
  const wrongToken = `${csrf.slice(0, -1)}${csrf.endsWith('x') ? 'y' : 'x'}`
  for (const [headers, payload] of [
    [{ cookie, ...FORM }, form({ name: 'no token' })],
    [{ cookie, ...FORM }, form({ name: 'wrong token', csrf: wrongToken })],
    [{ cookie, ...FORM, origin: 'https://evil.example' }, form({ name: 'other origin', csrf })],
  ] as const) {
    const refused = await service.app.inject({ method: 'POST', url: '/dashboard/accounts', headers, payload })
    assert.equal(refused.statusCode, 403, refused.body)
    assert.equal(refused.json().code, 'CSRF_REFUSED')
  }
  assert.equal((await service.admin({ method: 'GET', url: '/admin/accounts' })).json().length, accountsBefore)
  const accepted = await service.app.inject({
    method: 'POST',
    url: '/dashboard/accounts',
    headers: { cookie, ...FORM },
    payload: form({ name: 'with token', csrf }),
  })
  assert.equal(accepted.statusCode, 303)
  assert.equal((await service.admin({ method: 'GET', url: '/admin/accounts' })).json().length, accountsBefore + 1)
})

test('behind a proxy that terminates TLS: the cookie is Secure, and the https Origin of the same host is accepted', async () => {
  const signedIn = await service.app.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    headers: { ...FORM, 'x-forwarded-proto': 'https', host: 'pay.example', origin: 'https://pay.example' },
    payload: form({ token: ADMIN_TOKEN }),
  })
  assert.equal(signedIn.statusCode, 303)
  assert.match(String(signedIn.headers['set-cookie']), /; Secure/)
  const { cookie, csrf } = await session()
  const created = await service.app.inject({
    method: 'POST',
    url: '/dashboard/accounts',
    headers: { cookie, ...FORM, host: 'pay.example', origin: 'https://pay.example' },
    payload: form({ name: 'through the proxy', csrf }),
  })
  assert.equal(created.statusCode, 303)
  const plain = await service.app.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    headers: FORM,
    payload: form({ token: ADMIN_TOKEN }),
  })
  assert.doesNotMatch(String(plain.headers['set-cookie']), /Secure/)
})

test('a POST without a session is refused, a page without one goes to the sign-in form', async () => {
  const post = await service.app.inject({ method: 'POST', url: '/dashboard/accounts', headers: FORM, payload: form({ name: 'x' }) })
  assert.equal(post.statusCode, 401)
  const forged = await service.app.inject({ method: 'GET', url: '/dashboard/payments', headers: { cookie: 'paywatch_dashboard=forged' } })
  assert.equal(forged.statusCode, 303)
})

test('wrong tokens are throttled per address with the failed authentications', async () => {
  const throttled = await startTestService({ background: false, env: { PAYWATCH_AUTH_FAILURES: '3' } })
  try {
    const attempt = (token: string, remoteAddress: string) =>
      throttled.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: FORM, payload: form({ token }), remoteAddress })
    for (let i = 0; i < 3; i++) assert.equal((await attempt('wrong-token-guess', '10.9.8.7')).statusCode, 401)
    const blocked = await attempt(ADMIN_TOKEN, '10.9.8.7')
    assert.equal(blocked.statusCode, 429, 'even the right token waits once the address is over its failures')
    assert.match(blocked.body, /Too many wrong tokens/)
    assert.ok(Number(blocked.headers['retry-after']) > 0)
    assert.equal((await attempt(ADMIN_TOKEN, '10.9.8.8')).statusCode, 303, 'another address signs in')
  } finally {
    await throttled.close()
  }
})

test('without PAYWATCH_ADMIN_TOKEN there is no dashboard (404, like the admin API)', async () => {
  const bare = await startTestService({ env: { PAYWATCH_ADMIN_TOKEN: '' }, background: false })
  try {
    for (const url of ['/dashboard', '/dashboard/sign-in', '/dashboard/assets/dashboard.css']) {
      assert.equal((await bare.app.inject({ method: 'GET', url })).statusCode, 404, url)
    }
  } finally {
    await bare.close()
  }
})
