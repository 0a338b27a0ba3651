// @paywatch/client in a browser (docs/api.md, "Integrator kit"): the built ES modules (packages/client/dist),
// loaded by Chromium as a bundler would hand them over (openapi-fetch through an import map), verify a
// callback signature and a Standard Webhooks signature on the browser's Web Crypto. Chromium as the
// dashboard's browser tests drive it; skipped with the reason when it is not installed.
import assert from 'node:assert/strict'
import { constants, generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { chromiumMissing, openBrowser, type Browser } from '../dashboard/browser.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
/** URL prefix → folder served under it. */
const served: Record<string, string> = {
  '/client/': join(root, 'packages/client/dist'),
  '/openapi-fetch/': join(root, 'node_modules/openapi-fetch/dist'),
}
const page = `<!doctype html><meta charset="utf-8"><title>client</title>
<script type="importmap">{"imports": {"openapi-fetch": "/openapi-fetch/index.mjs"}}</script>`

let server: Server
let baseUrl: string
let browser: Browser | undefined

before(async () => {
  if (chromiumMissing) return
  server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname
    if (path === '/') return void response.writeHead(200, { 'content-type': 'text/html' }).end(page)
    const prefix = Object.keys(served).find((p) => path.startsWith(p))
    const file = prefix && normalize(join(served[prefix]!, path.slice(prefix.length)))
    if (!file || !file.startsWith(served[prefix]!)) return void response.writeHead(404).end()
    try {
      response.writeHead(200, { 'content-type': 'text/javascript' }).end(await readFile(file))
    } catch {
      response.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  browser = await openBrowser()
})
after(async () => {
  await browser?.close()
  server?.close()
})

test('verifyCallback and verifyWebhook in Chromium, on Web Crypto', { skip: chromiumMissing }, async () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const body = '{"status":"success","amount":"1.5","secret_id":"browser"}'
  const signature = sign('sha256', Buffer.from(body), {
    key: privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: 64,
  }).toString('base64url')
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  const timestamp = Math.floor(Date.now() / 1000)
  const input = {
    body,
    signature,
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }) as string,
    secret,
    headers: {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), body),
    },
  }
  const tab = browser!.page
  const errors: string[] = []
  tab.on('pageerror', (error) => errors.push(error.message))
  await tab.goto(baseUrl)
  const results = await tab.evaluate(async (input) => {
    // A string import: TypeScript must not resolve it here, the browser resolves it against the page.
    const specifier = '/client/index.js'
    const kit = (await import(specifier)) as typeof import('@paywatch/client')
    return {
      native: typeof (globalThis as { process?: unknown }).process,
      callback: [
        await kit.verifyCallback(input),
        await kit.verifyCallback({ ...input, body: `${input.body} ` }),
        await kit.verifyCallback({ ...input, body: new TextEncoder().encode(input.body) }),
      ],
      webhook: [
        await kit.verifyWebhook({ body: input.body, headers: new Headers(input.headers), secret: input.secret }),
        await kit.verifyWebhook({ body: input.body, headers: input.headers, secret: `whsec_${btoa('another secret, 24 bytes!')}` }),
      ],
    }
  }, input)
  assert.deepEqual(errors, [])
  assert.deepEqual(results, { native: 'undefined', callback: [true, false, true], webhook: [true, false] })
})
