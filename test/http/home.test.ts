// A service started with the defaults says what it lacks (docs/operations.md, "First start"): one warning
// per missing piece naming the variable, a home page at / linking /docs, /dashboard and /openapi.json, and
// /dashboard that signs in when an admin token is set and says how to turn it on when not.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { missingSetup } from '../../src/config/missing-setup.ts'
import { startTestService } from '../support/service.ts'

test('missingSetup: one entry per missing piece, naming the exact variable and how to add it', () => {
  const cases = [
    { adminToken: null, chains: [], variables: ['PAYWATCH_RPC_<CHAIN>', 'PAYWATCH_ADMIN_TOKEN'] },
    { adminToken: 'secret', chains: [], variables: ['PAYWATCH_RPC_<CHAIN>'] },
    { adminToken: null, chains: ['ethereum'], variables: ['PAYWATCH_ADMIN_TOKEN'] },
    { adminToken: 'secret', chains: ['ethereum'], variables: [] },
  ]
  for (const { adminToken, chains, variables } of cases) {
    const missing = missingSetup({ adminToken }, chains)
    assert.deepEqual(
      missing.map((m) => m.variable),
      variables,
    )
    for (const line of missing) {
      assert.ok(!line.message.includes('\n'), 'one line')
      assert.match(
        line.message,
        line.variable === 'PAYWATCH_ADMIN_TOKEN'
          ? /PAYWATCH_ADMIN_TOKEN=\$\(openssl rand -hex 24\) npm start/
          : /PAYWATCH_RPC_ETHEREUM=\S+ npm start/,
      )
    }
  }
})

test('GET / links /docs, /dashboard and /openapi.json with the dashboard’s security headers; /dashboard off says what to set', async () => {
  const service = await startTestService({ env: { PAYWATCH_ADMIN_TOKEN: '' } })
  try {
    const home = await service.app.inject({ method: 'GET', url: '/' })
    assert.equal(home.statusCode, 200)
    assert.match(home.headers['content-type'] as string, /^text\/html/)
    for (const link of ['/docs', '/dashboard', '/openapi.json']) assert.ok(home.body.includes(`<a href="${link}">`), link)
    assert.match(home.body, /PAYWATCH_ADMIN_TOKEN/)
    assert.match(home.body, /PAYWATCH_RPC_&lt;CHAIN&gt;/)
    assert.match(home.headers['content-security-policy'] as string, /default-src 'none'.*frame-ancestors 'none'/)
    assert.equal(home.headers['x-frame-options'], 'DENY')
    assert.equal(home.headers['x-content-type-options'], 'nosniff')
    const dashboard = await service.app.inject({ method: 'GET', url: '/dashboard' })
    assert.equal(dashboard.statusCode, 404)
    assert.match(dashboard.headers['content-type'] as string, /^text\/html/)
    assert.match(dashboard.body, /Set <code>PAYWATCH_ADMIN_TOKEN<\/code>/)
    for (const url of ['/docs', '/openapi.json'])
      assert.equal((await service.app.inject({ method: 'GET', url })).statusCode < 400, true, url)
  } finally {
    await service.close()
  }
})

test('with an admin token: / lists nothing missing but the chain, /dashboard without a session goes to sign-in', async () => {
  const service = await startTestService()
  try {
    const home = await service.app.inject({ method: 'GET', url: '/' })
    assert.doesNotMatch(home.body, /PAYWATCH_ADMIN_TOKEN/)
    const dashboard = await service.app.inject({ method: 'GET', url: '/dashboard' })
    assert.equal(dashboard.statusCode, 303)
    assert.equal(dashboard.headers.location, '/dashboard/sign-in')
  } finally {
    await service.close()
  }
})
