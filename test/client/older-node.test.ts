// @paywatch/client outside this project's Node 24: `npm run build -w @paywatch/client` compiles it to
// JavaScript (packages/client/dist), and the machine's older Node (18 to 23, when there is one) verifies a
// callback signature and a Standard Webhooks signature with it, on that Node's WebCrypto.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { constants, generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { test } from 'node:test'
import { Webhook } from 'standardwebhooks'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))
const olderNode = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => existsSync(path))
const major = async (node: string) => Number((await run(node, ['--version'])).stdout.trim().slice(1).split('.')[0])
const usable = olderNode && (await major(olderNode)) >= 18 && (await major(olderNode)) < 24
const skip = usable ? false : 'no Node.js 18 to 23 installed besides the project one'

test('the compiled package verifies on an older Node', { skip, timeout: 120_000 }, async () => {
  await run(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(root, 'packages/client/tsconfig.build.json')])
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const body = '{"status":"success","amount":"1.5"}'
  const signature = sign('sha256', Buffer.from(body), {
    key: privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: 64,
  }).toString('base64url')
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  const timestamp = Math.floor(Date.now() / 1000)
  const webhookSignature = new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), body)
  const input = {
    body,
    signature,
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }),
    secret,
    headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': webhookSignature },
  }
  const script = join(root, 'packages/client/dist/verify-check.mjs')
  writeFileSync(
    script,
    `import { verifyCallback, verifyWebhook } from './index.js'
const input = JSON.parse(process.argv[2])
const results = [
  await verifyCallback(input),
  await verifyCallback({ ...input, body: input.body + ' ' }),
  await verifyWebhook({ body: new TextEncoder().encode(input.body), headers: input.headers, secret: input.secret }),
  await verifyWebhook({ body: input.body, headers: input.headers, secret: 'whsec_' + btoa('another secret, 24 bytes!') }),
]
console.log(JSON.stringify({ node: process.version, results }))
`,
  )
  const { stdout } = await run(olderNode!, [script, JSON.stringify(input)])
  const answer = JSON.parse(stdout) as { node: string; results: boolean[] }
  assert.ok(Number(answer.node.slice(1).split('.')[0]) < 24, answer.node)
  assert.deepEqual(answer.results, [true, false, true, false])
})
