// The overview's chain table renders what /readyz reports, providers included, with every value escaped.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { chainRows } from '../../src/dashboard/overview.ts'

test('chains with their providers (head, lag, capabilities, state) and pending counts; values escaped', () => {
  const text = chainRows(
    [
      {
        name: 'ethereum',
        ok: true,
        head: '21000000',
        headAgeSeconds: 3,
        providers: [
          {
            url: 'https://rpc.one.example',
            head: '21000000',
            lag: 0,
            capabilities: ['eth_getBlockReceipts', 'debug_traceTransaction'],
            state: 'ok',
          },
          { url: 'https://rpc.two.example', head: '20999995', lag: 5, capabilities: [], state: 'lagging' },
        ],
      },
      { name: 'polygon', ok: false, error: 'no provider serves <polygon>' },
    ],
    { counts: new Map([['ethereum', 7]]), estimated: false },
  ).text
  assert.match(text, /<th scope="row">ethereum<\/th>/)
  assert.match(text, /data-field="pending">7</)
  assert.match(text, /<caption>Providers of ethereum<\/caption>/)
  assert.match(
    text,
    /rpc\.two\.example<\/code><\/th>\s*<td>lagging<\/td>\s*<td class="num">20999995<\/td>\s*<td class="num">5<\/td>\s*<td>none found<\/td>/,
  )
  assert.match(text, /eth_getBlockReceipts, debug_traceTransaction/)
  assert.match(text, /not ready/)
  assert.match(text, /no provider serves &lt;polygon&gt;/)
  assert.doesNotMatch(text, /Providers of polygon/)
})

test("a pending count past 10,000 is the database's estimate: shown rounded, with ≈ and a title saying so", () => {
  const chains = [
    { name: 'ethereum', ok: true },
    { name: 'polygon', ok: true },
  ]
  const text = chainRows(chains, { counts: new Map([['ethereum', 1_004_213]]), estimated: true }).text
  assert.match(text, /data-field="pending" title="estimated from the database's statistics">≈1,000,000</)
  assert.match(text, /<th scope="row">polygon<\/th>[\s\S]*data-field="pending" title="[^"]*">≈0</)
})
