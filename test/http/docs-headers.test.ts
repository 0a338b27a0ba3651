// /docs shares the dashboard's origin: it carries a Content-Security-Policy and frame protection, and
// Swagger UI still renders under them in Chromium (no CSP violation, the operations listed).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../support/service.ts'
import { chromiumMissing, listenOn, openBrowser } from '../dashboard/browser.ts'

let service: TestService
before(async () => {
  service = await startTestService({ background: false })
})
after(async () => {
  await service?.close()
})

test('/docs, its assets and its initializer carry CSP and frame protection', async () => {
  for (const url of ['/docs', '/docs/', '/docs/static/swagger-initializer.js', '/docs/static/swagger-ui.css']) {
    const res = await service.app.inject({ method: 'GET', url })
    assert.ok(res.statusCode < 400, `${url}: ${res.statusCode}`)
    const csp = String(res.headers['content-security-policy'] ?? '')
    assert.match(csp, /frame-ancestors 'none'/, url)
    assert.match(csp, /script-src 'self'(;|$)/, `${url}: scripts from this server only, none inline`)
    assert.match(csp, /default-src 'none'/, url)
    assert.equal(res.headers['x-frame-options'], 'DENY', url)
    assert.equal(res.headers['x-content-type-options'], 'nosniff', url)
  }
})

test('Swagger UI renders under that policy in Chromium', { skip: chromiumMissing }, async () => {
  const baseUrl = await listenOn(service)
  const browser = await openBrowser()
  try {
    const violations: string[] = []
    browser.page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text())
    })
    await browser.page.goto(`${baseUrl}/docs`)
    await browser.page.locator('.swagger-ui .info .title', { hasText: 'Paywatch' }).waitFor()
    await browser.page.locator('.opblock-summary-path', { hasText: '/v2/payments' }).first().waitFor()
    assert.deepEqual(violations, [])
  } finally {
    await browser.close()
  }
})
