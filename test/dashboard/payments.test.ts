// The dashboard in Chromium over a real chain: an Anvil payment shows up, its page shows success and
// the callback attempt a real receiver answered; Redeliver adds an attempt; a pending payment's
// confirmations count up without a reload. Screenshots of every page are kept (test/.artifacts).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { parseEther } from 'viem'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, freshAddress, startEngineService, waitForFinal } from '../engine/support.ts'
import { startReceiver, type Receiver } from '../callbacks/support.ts'
import { chromiumMissing, listenOn, openBrowser, screenshot, signIn, type Browser } from './browser.ts'

describe('dashboard over a real chain', { skip: chromiumMissing }, () => {
  let anvil: Anvil
  let service: TestService
  let receiver: Receiver
  let browser: Browser
  let baseUrl: string
  let apiKey: string
  let accountId: string

  before(async () => {
    anvil = await startAnvil()
    receiver = await startReceiver(() => ({ status: 200 }))
    service = await startEngineService(anvil, { callbacks: { pollMs: 50 } })
    ;({ apiKey, accountId } = await service.newAccount('Shop GmbH'))
    baseUrl = await listenOn(service)
    browser = await openBrowser()
    await signIn(browser.page, baseUrl)
  })
  after(async () => {
    await browser?.close()
    await service?.close()
    await receiver?.close()
    await anvil?.stop()
  })

  test('a paid payment is found by its secret_id; its page shows success and the callback attempt; Redeliver adds one', async () => {
    const { page } = browser
    const sender = anvil.accounts[1]!
    const to = freshAddress()
    const { request } = await createPayment(service, apiKey, anvil, sender, {
      receiver: to,
      amount: '0.25',
      callback: `${receiver.url}/paid`,
    })
    await sendNative(anvil, sender, to, parseEther('0.25'))
    await waitForFinal(service, apiKey, request.secret_id)
    await receiver.waitFor(1)

    await page.goto(`${baseUrl}/dashboard/payments`)
    await page.getByLabel('Search').fill(request.secret_id)
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.getByRole('link', { name: request.secret_id }).click()
    await page.waitForURL(/\/dashboard\/payments\/secret-/)
    await page.locator('li.step-attempt').first().waitFor()
    assert.equal(await page.locator('[data-field="status"]').innerText(), 'success')
    const attempt = await page.locator('li.step-attempt').first().innerText()
    assert.match(attempt, /Callback attempt 1: answered 200 in \d+ ms, delivered/)
    assert.equal(await page.locator('li.step-judged-success').count(), 1)
    await screenshot(page, 'payment-success')

    await page.getByRole('button', { name: 'Redeliver' }).click()
    await page.getByRole('status').filter({ hasText: 'due again' }).waitFor()
    // The new attempt appears without a reload: the page is live while a delivery is due.
    await page.locator('li.step-attempt').nth(1).waitFor({ timeout: 15_000 })
    assert.equal(receiver.received.length, 2)
    assert.match(await page.locator('li.step-redeliver').innerText(), /Redelivery requested/)
    await screenshot(page, 'payment-redelivered')

    await page.goto(`${baseUrl}/dashboard/payments`)
    assert.equal(await page.getByRole('link', { name: request.secret_id }).count(), 1)
    await screenshot(page, 'payments')
  })

  test("a pending payment's confirmations count up on its page without a reload", async () => {
    const { page } = browser
    const sender = anvil.accounts[2]!
    const to = freshAddress()
    const { request } = await createPayment(service, apiKey, anvil, sender, {
      receiver: to,
      amount: '1',
      confirmations: 3,
      callback: `${receiver.url}/paid`,
    })
    await page.goto(`${baseUrl}/dashboard/payments/${request.secret_id}`)
    assert.equal(await page.locator('[data-field="confirmations"]').innerText(), 'transaction not seen yet')
    await page.evaluate('window.loadedOnce = true')

    await sendNative(anvil, sender, to, parseEther('1'))
    await page.locator('[data-field="confirmations"]', { hasText: '1 of 3' }).waitFor()
    await page.locator('li.step-seen').waitFor()
    await screenshot(page, 'payment-pending')
    await anvil.testClient.mine({ blocks: 1 })
    await page.locator('[data-field="confirmations"]', { hasText: '2 of 3' }).waitFor()
    await page.locator('[data-field="timeline-confirmations"]', { hasText: '2 of 3' }).waitFor()
    await anvil.testClient.mine({ blocks: 1 })
    await page.locator('[data-field="status"]', { hasText: 'success' }).waitFor()
    assert.equal(await page.evaluate('window.loadedOnce'), true, 'the page was never reloaded')
  })

  test('overview, accounts, an account with a new key, an app, and a phone-width page render', async () => {
    const { page } = browser
    await page.goto(`${baseUrl}/dashboard`)
    const chainRow = page.locator('tr[data-chain="ethereum"]')
    await chainRow.waitFor()
    assert.match(await chainRow.innerText(), /ready/)
    assert.match(await page.locator('figure.chart figcaption').first().innerText(), /Payments completed per minute \(2 in 3 h\)/)
    await screenshot(page, 'overview')

    await page.goto(`${baseUrl}/dashboard/accounts`)
    await screenshot(page, 'accounts')
    await page.getByRole('link', { name: 'Shop GmbH' }).click()
    await page.getByRole('button', { name: 'Create API key' }).click()
    const key = await page.locator('[data-field="new-key"]').innerText()
    const works = await service.api(key, { method: 'GET', url: '/v2/payments/nothing-here' })
    assert.equal(works.statusCode, 404, 'the key shown once authenticates')
    await page.getByLabel('App name').fill('Reporting')
    await page.getByRole('button', { name: 'Create app' }).click()
    await page.getByRole('status').filter({ hasText: 'app is created' }).waitFor()
    await screenshot(page, 'account')
    await page.getByRole('link', { name: 'Reporting' }).click()
    await page.getByLabel('Granting account id').fill(accountId)
    await page.getByLabel('payments.shopify.read').check()
    await page.getByRole('button', { name: 'Grant' }).click()
    await page.locator('code.secret').waitFor()
    await screenshot(page, 'app')

    const phone = await openBrowser({ width: 390, height: 844 })
    try {
      await signIn(phone.page, baseUrl)
      await screenshot(phone.page, 'overview-phone')
      const overflow = await phone.page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')
      assert.ok(overflow <= 0, `the overview fits a phone's width (overflows by ${overflow} px)`)
      await phone.page.goto(`${baseUrl}/dashboard/payments`)
      await screenshot(phone.page, 'payments-phone')
    } finally {
      await phone.close()
    }
  })
})
