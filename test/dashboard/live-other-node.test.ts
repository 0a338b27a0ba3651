// A payment page stays live when the verdict is written by another node, whose events never reach this
// node's bus: the page's stream looks at the stored state and the page updates without a reload.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { insertPending } from '../callbacks/support.ts'
import { completeTracking } from '../../src/store/complete-tracking.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { chromiumMissing, listenOn, openBrowser, signIn, type Browser } from './browser.ts'

describe('live across nodes', { skip: chromiumMissing }, () => {
  let service: TestService
  let browser: Browser
  let baseUrl: string

  before(async () => {
    service = await startTestService({ background: false })
    baseUrl = await listenOn(service)
    browser = await openBrowser()
    await signIn(browser.page, baseUrl)
  })
  after(async () => {
    await browser?.close()
    await service?.close()
  })

  test('a verdict written without an event on this node reaches the open payment page', async () => {
    const { accountId } = await service.newAccount()
    // Without a callback: no delivery row either, only the status changes.
    const tracking = await insertPending(service.database.db, accountId, { callback: null })
    const { page } = browser
    await page.goto(`${baseUrl}/dashboard/payments/${tracking.secretId}`)
    assert.equal(await page.locator('[data-field="status"]').innerText(), 'pending')
    await page.evaluate('window.loadedOnce = true')

    // What another node's engine does: status and delivery row in one transaction; no event here.
    await completeTracking(service.database.db, tracking.id, { status: 'success', transaction: `0x${'ab'.repeat(32)}` }, new Date())
    await page.locator('[data-field="status"]', { hasText: 'success' }).waitFor({ timeout: 10_000 })
    assert.equal(await page.evaluate('window.loadedOnce'), true, 'the page was never reloaded')
    assert.equal(await page.locator('li.step-judged-success').count(), 1)
  })
})
