// The dashboard's details (docs/operations.md, "Dashboard") in Chromium over a real chain: a pending
// payment whose transaction is not seen says it waits for it (never "confirmed, 1 confirmations"); amounts
// carry their token's symbol; addresses are EIP-55 as the API answers them; the account is shown by name;
// a redelivery asked for through the API is marked so in the timeline; the chart's unit label is inside the
// chart; on a narrow screen no column of the payment list is cut off. Screenshots in test/.artifacts.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { getAddress, parseUnits } from 'viem'
import { deployToken, mintToken, startAnvil, transferToken, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { createPayment, freshAddress, startEngineService, waitForFinal } from '../engine/support.ts'
import { eventually, startReceiver, type Receiver } from '../callbacks/support.ts'
import { chromiumMissing, listenOn, openBrowser, screenshot, signIn, type Browser } from './browser.ts'

describe('dashboard details', { skip: chromiumMissing }, () => {
  let anvil: Anvil
  let service: TestService
  let receiver: Receiver
  let browser: Browser
  let baseUrl: string
  let apiKey: string
  let accountId: string
  let token: `0x${string}`

  before(async () => {
    anvil = await startAnvil()
    token = await deployToken(anvil, 'Test Dollar', 'TDOL', 6)
    await mintToken(anvil, token, anvil.accounts[1]!.address, parseUnits('1000', 6))
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

  test('a pending payment whose transaction is not seen waits for it', async () => {
    const { page } = browser
    const { request } = await createPayment(service, apiKey, anvil, anvil.accounts[3]!, {
      receiver: freshAddress(),
      amount: '1',
      nonce: '999',
    })
    await page.goto(`${baseUrl}/dashboard/payments/${request.secret_id}`)
    assert.equal(
      await page.locator('[data-field="commitment"]').innerText(),
      'confirmed: needs 1 confirmation, waiting for the transaction',
    )
    assert.equal(await page.locator('[data-field="transaction"]').innerText(), 'waiting for the transaction')
    assert.doesNotMatch(await page.locator('main').innerText(), /1 confirmations/)
    await screenshot(page, 'details-pending-unseen')
  })

  test('a token payment: amount with its symbol, EIP-55 addresses, the account by name, an API redelivery marked', async () => {
    const { page } = browser
    const sender = anvil.accounts[1]!
    const to = freshAddress()
    const { request } = await createPayment(service, apiKey, anvil, sender, {
      receiver: to.toLowerCase(),
      token: token.toLowerCase(),
      amount: '2.5',
      callback: `${receiver.url}/paid`,
    })
    await transferToken(anvil, token, sender, to, parseUnits('2.5', 6))
    await waitForFinal(service, apiKey, request.secret_id)
    await receiver.waitFor(1)
    // The first delivery recorded as delivered: a redelivery asked for while it is in flight is that same one.
    await eventually(async () => {
      const listed = await service.api(apiKey, { method: 'GET', url: `/v2/payments/${request.secret_id}/deliveries` })
      return listed.json<{ deliveries: { state: string }[] }>().deliveries[0]?.state === 'delivered'
    })
    const redelivered = await service.api(apiKey, { method: 'POST', url: `/v2/payments/${request.secret_id}/redeliver` })
    assert.equal(redelivered.statusCode < 300, true, redelivered.body)
    await receiver.waitFor(2)

    await page.goto(`${baseUrl}/dashboard/payments/${request.secret_id}`)
    await page.locator('li.step-attempt').nth(1).waitFor()
    assert.equal(await page.locator('[data-field="amount"]').innerText(), '2.5 TDOL')
    assert.equal(await page.locator('[data-field="commitment"]').innerText(), 'confirmed, 1 confirmation')
    assert.equal(await page.locator('[data-field="account"]').innerText(), 'Shop GmbH')
    assert.match(await page.locator('dl').innerText(), new RegExp(accountId))
    // Addresses as the API answers them: EIP-55 mixed case (whole in the title, shortened on screen).
    const titles = await page.locator('dl code[title]').evaluateAll((codes) => codes.map((code) => code.getAttribute('title')))
    for (const address of [getAddress(token), getAddress(to), sender.address])
      assert.ok(titles.includes(address), `${address} in ${titles}`)
    assert.equal(await page.locator('li.step-redeliver-api').count(), 1)
    assert.match(await page.locator('li.step-redeliver-api').innerText(), /Redelivery requested through the API/)
    await screenshot(page, 'details-token-payment')

    await page.goto(`${baseUrl}/dashboard/payments`)
    const row = page.locator('table.payments tbody tr', { hasText: request.secret_id })
    assert.match(await row.innerText(), /2\.5 TDOL/)
    assert.equal(await row.locator(`code[title="${sender.address}"]`).count(), 1)
  })

  test("the chart's unit label is inside the chart", async () => {
    const { page } = browser
    await page.goto(`${baseUrl}/dashboard`)
    const labels = await page.locator('figure.chart svg').evaluateAll((svgs) =>
      svgs.flatMap((svg) =>
        Array.from(svg.querySelectorAll('.axis text')).map((text) => {
          const box = (text as SVGGraphicsElement).getBBox()
          const view = (svg as SVGSVGElement).viewBox.baseVal
          return {
            text: text.textContent,
            inside: box.x >= 0 && box.y >= 0 && box.x + box.width <= view.width && box.y + box.height <= view.height,
          }
        }),
      ),
    )
    assert.ok(labels.length > 0)
    assert.deepEqual(
      labels.filter((label) => !label.inside),
      [],
    )
    await screenshot(page, 'details-overview')
  })

  test('on a narrow screen no column of the payment list is cut off', async () => {
    const narrow = await openBrowser({ width: 390, height: 844 })
    try {
      await signIn(narrow.page, baseUrl)
      await narrow.page.goto(`${baseUrl}/dashboard/payments`)
      const cells = await narrow.page.locator('table.payments tbody tr:first-child > *').evaluateAll((elements) =>
        elements.map((element) => {
          const box = element.getBoundingClientRect()
          return { text: (element as HTMLElement).innerText, left: box.left, right: box.right, width: window.innerWidth }
        }),
      )
      assert.equal(cells.length, 7)
      for (const cell of cells)
        assert.ok(cell.left >= 0 && cell.right <= cell.width, `${cell.text}: ${cell.left}..${cell.right} of ${cell.width}`)
      const scrollWidth = await narrow.page.evaluate(() => document.documentElement.scrollWidth)
      assert.ok(scrollWidth <= 390, `the page is ${scrollWidth} px wide`)
      await screenshot(narrow.page, 'details-payments-narrow')
    } finally {
      await narrow.close()
    }
  })
})
