// The admin API is one scope (src/http/admin-scope.ts): every route under /admin/, whichever subsystem adds it,
// refuses a request without the admin token: 401 with a missing or wrong token when PAYWATCH_ADMIN_TOKEN is set,
// 404 (no admin API at all) when it is not (docs/api.md §6). The routes are read from the Fastify instance,
// so a route added later is checked without changing this test.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ADMIN_TOKEN, startTestService, type TestService } from '../support/service.ts'

/** A request to the route with its parameters filled in and, for a body, an empty JSON object. */
function requestOf(route: { method: string; url: string }, headers: Record<string, string>) {
  const url = route.url.replace(/:([A-Za-z_]+)/g, 'x-$1')
  const takesBody = ['POST', 'PUT', 'PATCH'].includes(route.method)
  return {
    method: route.method as 'GET',
    url,
    headers: takesBody ? { ...headers, 'content-type': 'application/json' } : headers,
    ...(takesBody ? { payload: '{}' } : {}),
  }
}

const adminRoutesOf = (service: TestService) => service.app.registeredRoutes.filter((route) => route.url.startsWith('/admin/'))

describe('admin API with PAYWATCH_ADMIN_TOKEN set', () => {
  let service: TestService
  before(async () => {
    service = await startTestService({ background: false })
  })
  after(async () => service?.close())

  test('every /admin/ route answers 401 without the token or with a wrong one', async () => {
    const routes = adminRoutesOf(service)
    // The account, key, integration, endpoint, link, shop, app and grant routes are all there.
    assert.ok(routes.length >= 20, `${routes.length} admin routes`)
    for (const path of ['/admin/accounts', '/admin/accounts/:id/integrations', '/admin/apps/:id/grants', '/admin/accounts/:id/shops']) {
      assert.ok(
        routes.some((route) => route.url === path && route.method === 'POST'),
        `POST ${path} is registered`,
      )
    }
    for (const route of routes) {
      for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${ADMIN_TOKEN}x` }, { authorization: ADMIN_TOKEN }]) {
        const res = await service.app.inject(requestOf(route, headers))
        assert.equal(res.statusCode, 401, `${route.method} ${route.url} with ${JSON.stringify(headers)}: ${res.body}`)
        assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
        // A HEAD answer (Fastify adds one per GET) has the status and headers but no body.
        if (route.method !== 'HEAD') assert.equal(res.json().code, 'UNAUTHORIZED')
      }
    }
  })

  test('with the token the guard lets the request through (the route answers for itself)', async () => {
    for (const route of adminRoutesOf(service)) {
      const res = await service.app.inject(requestOf(route, { authorization: `Bearer ${ADMIN_TOKEN}` }))
      assert.notEqual(res.statusCode, 401, `${route.method} ${route.url}`)
      assert.ok(res.statusCode < 500, `${route.method} ${route.url}: ${res.statusCode} ${res.body}`)
    }
  })
})

describe('admin API without PAYWATCH_ADMIN_TOKEN', () => {
  let service: TestService
  before(async () => {
    service = await startTestService({ background: false, env: { PAYWATCH_ADMIN_TOKEN: '' } })
  })
  after(async () => service?.close())

  test('every /admin/ route answers 404, with or without a token', async () => {
    assert.equal(service.config.adminToken, null)
    const routes = adminRoutesOf(service)
    assert.ok(routes.length >= 20)
    for (const route of routes) {
      for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${ADMIN_TOKEN}` }]) {
        const res = await service.app.inject(requestOf(route, headers))
        assert.equal(res.statusCode, 404, `${route.method} ${route.url}: ${res.body}`)
        if (route.method !== 'HEAD') assert.equal(res.json().code, 'NOT_FOUND')
      }
    }
  })
})
