// The dashboard's endpoints page in Chromium: a disabled endpoint is enabled, and the deliveries that
// died since a time are sent again (Recover), through the webhook platform's use cases.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { insertCompleted, startReceiver, type Receiver } from '../callbacks/support.ts'
import { startTestService, type TestService } from '../support/service.ts'
import { chromiumMissing, listenOn, openBrowser, screenshot, signIn, type Browser } from './browser.ts'

describe('endpoints page', { skip: chromiumMissing }, () => {
  let service: TestService
  let browser: Browser
  let baseUrl: string
  let accountId: string
  let trackingId: string
  let receiver: Receiver
  let ENDPOINT: string

  before(async () => {
    // No background work: the deliveries the page schedules stay in the table to be looked at.
    receiver = await startReceiver(() => ({ status: 200 }))
    ENDPOINT = receiver.url
    service = await startTestService({ background: false })
    ;({ accountId } = await service.newAccount('Endpoint Shop'))
    const db = service.database.db
    const tracking = await insertCompleted(db, accountId, { callback: `${ENDPOINT}/hooks/paywatch` })
    trackingId = tracking.id
    const hourAgo = new Date(Date.now() - 3_600_000)
    await db
      .updateTable('deliveries')
      .set({ state: 'dead', attempts: 5, finished_at: hourAgo, last_attempt_at: hourAgo, last_status_code: 410 })
      .where('tracking_id', '=', trackingId)
      .execute()
    await db
      .insertInto('webhook_endpoints')
      .values({
        account_id: accountId,
        url: ENDPOINT,
        state: 'disabled',
        disabled_reason: 'answered 410 Gone',
        disabled_at: hourAgo,
        failing_since: new Date(Date.now() - 7_200_000),
        updated_at: hourAgo,
      })
      .execute()
    baseUrl = await listenOn(service)
    browser = await openBrowser()
    await signIn(browser.page, baseUrl)
  })
  after(async () => {
    await browser?.close()
    await service?.close()
    await receiver?.close()
  })

  test('Enable turns a disabled endpoint active; Recover sends the deliveries that died since the given time again', async () => {
    const { page } = browser
    await page.goto(`${baseUrl}/dashboard/endpoints`)
    const row = page.locator(`tr[data-endpoint="${ENDPOINT}"]`)
    assert.equal(await row.locator('[data-field="state"]').innerText(), 'disabled')
    assert.match(await row.innerText(), /answered 410 Gone/)
    await screenshot(page, 'endpoints-disabled')

    await row.getByRole('button', { name: 'Enable' }).click()
    await page.getByRole('status').filter({ hasText: 'is enabled' }).waitFor()
    assert.equal(await row.locator('[data-field="state"]').innerText(), 'active')
    const stored = await service.database.db
      .selectFrom('webhook_endpoints')
      .select('state')
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow()
    assert.equal(stored.state, 'active')

    const twoHoursAgo = new Date(Date.now() - 7_200_000).toISOString().slice(0, 16)
    await row.getByLabel('Recover since (UTC)').fill(twoHoursAgo)
    await row.getByRole('button', { name: 'Recover' }).click()
    await page.getByRole('status').filter({ hasText: '1 delivery to' }).waitFor()
    const due = await service.database.db
      .selectFrom('deliveries')
      .select(['reason', 'state'])
      .where('tracking_id', '=', trackingId)
      .where('state', '=', 'due')
      .execute()
    assert.deepEqual(due, [{ reason: 'redeliver', state: 'due' }])
    await screenshot(page, 'endpoints')

    // A time after the deaths finds nothing more to send.
    await row.getByLabel('Recover since (UTC)').fill(new Date().toISOString().slice(0, 16))
    await row.getByRole('button', { name: 'Recover' }).click()
    await page.getByRole('status').filter({ hasText: '0 deliveries to' }).waitFor()

    await row.getByRole('button', { name: 'Send test event' }).click()
    await page.getByRole('status').filter({ hasText: 'test event is on its way' }).waitFor()
    const [got] = await receiver.waitFor(1)
    assert.equal(got!.headers['x-paywatch-event'], 'test')
    assert.equal(JSON.parse(got!.body).event, 'test')
  })
})
