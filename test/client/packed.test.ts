// @paywatch/client as an integrator installs it (docs/api.md, "Integrator kit"): `npm pack` in
// packages/client (its prepack builds dist/), the tarball installed into an empty project in a temp folder
// (offline, from npm's cache, with a lockfile taken from this project's), and there, by bare name,
// create/get/verifyCallback/verifyWebhook against the real service on Anvil, through `import` and through
// `require`, under the machine's own Node (20) and the project's Node 24. The declarations type-check there too.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { after, before, test } from 'node:test'
import { parseEther } from 'viem'
import { Webhook } from 'standardwebhooks'
import { sendNative, startAnvil, type Anvil } from '../support/index.ts'
import type { TestService } from '../support/service.ts'
import { freshAddress, NATIVE, startEngineService } from '../engine/support.ts'
import { startReceiver, type Receiver } from '../callbacks/support.ts'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))
const clientDir = join(root, 'packages/client')
const major = async (node: string) => Number((await run(node, ['--version'])).stdout.trim().slice(1).split('.')[0])
/** The machine's own Node (not the project's npm package `node`), when it is an older one. */
const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => existsSync(path))
const systemMajor = systemNode ? await major(systemNode) : 0
/** More Node binaries to try the package on, comma-separated (e.g. the npm packages node@18 and node@22 installed aside). */
const extraNodes = (process.env.PAYWATCH_TEST_NODES ?? '').split(',').filter(Boolean)
const nodes = [
  ...(systemNode && systemMajor < 24 ? [{ name: `system Node ${systemMajor}`, path: systemNode }] : []),
  { name: `project Node ${process.versions.node.split('.')[0]}`, path: process.execPath },
  ...(await Promise.all(extraNodes.map(async (path) => ({ name: `Node ${await major(path)} (${path})`, path })))),
]

let anvil: Anvil
let service: TestService
let receiver: Receiver
let project: string
let input: Record<string, unknown>

before(async () => {
  project = mkdtempSync(join(tmpdir(), 'paywatch-client-consumer-'))
  const packed = JSON.parse((await run('npm', ['pack', '--json', '--pack-destination', project], { cwd: clientDir })).stdout) as {
    filename: string
    files: { path: string }[]
  }[]
  const files = packed[0]!.files.map((file) => file.path)
  assert.ok(files.includes('dist/index.js') && files.includes('dist/index.d.ts') && files.includes('dist/cjs/index.js'), files.join())
  assert.ok(!files.some((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')), 'no TypeScript sources in the tarball')
  installInto(project, packed[0]!.filename)
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project })

  anvil = await startAnvil()
  receiver = await startReceiver()
  service = await startEngineService(anvil, { callbacks: { pollMs: 50 } })
  const { apiKey } = await service.newAccount()
  const baseUrl = await service.listen()
  const publicKey = await (await fetch(`${baseUrl}/v2/public-key`)).text()

  // One real callback of the service, for verifyCallback over there.
  const sender = anvil.accounts[1]!
  const to = freshAddress()
  const paid = await fetch(`${baseUrl}/v2/payments`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      blockchain: 'ethereum',
      sender: sender.address,
      nonce: String(await anvil.publicClient.getTransactionCount({ address: sender.address })),
      receiver: to,
      token: NATIVE,
      amount: '0.01',
      after_block: String(await anvil.publicClient.getBlockNumber()),
      secret_id: `packed-${randomBytes(6).toString('hex')}`,
      callback: receiver.url,
    }),
  })
  assert.equal(paid.status, 201)
  await sendNative(anvil, sender, to, parseEther('0.01'))
  const [callback] = await receiver.waitFor(1, 20_000)

  const secret = `whsec_${randomBytes(24).toString('base64')}`
  const timestamp = Math.floor(Date.now() / 1000)
  input = {
    baseUrl,
    apiKey,
    publicKey,
    callback: { body: callback!.body, signature: callback!.headers['x-signature'] },
    webhook: {
      secret,
      body: callback!.body,
      headers: {
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), callback!.body),
      },
    },
    request: {
      blockchain: 'ethereum',
      sender: sender.address,
      receiver: to,
      token: NATIVE,
      amount: '0.02',
      after_block: '0',
      callback: receiver.url,
    },
  }
  writeFileSync(
    join(project, 'check.mjs'),
    checkScript(`import { createClient, PaywatchError, verifyCallback, verifyWebhook } from '@paywatch/client'`),
  )
  writeFileSync(
    join(project, 'check.cjs'),
    checkScript(`const { createClient, PaywatchError, verifyCallback, verifyWebhook } = require('@paywatch/client')`),
  )
})
after(async () => {
  await service?.close()
  await receiver?.close()
  await anvil?.stop()
  if (project) rmSync(project, { recursive: true, force: true })
})

let nonce = 1000
for (const node of nodes) {
  for (const format of ['mjs', 'cjs'] as const) {
    test(`the packed client in an empty project: ${format === 'mjs' ? 'import' : 'require'} on ${node.name}`, async () => {
      const secretId = `packed-${format}-${randomBytes(6).toString('hex')}`
      const { stdout } = await run(
        node.path,
        [
          join(project, `check.${format}`),
          JSON.stringify({ ...input, request: { ...(input.request as object), nonce: String(nonce++) }, secretId }),
        ],
        { cwd: project },
      )
      const answer = JSON.parse(stdout) as Record<string, unknown>
      assert.equal(answer.node, (await run(node.path, ['--version'])).stdout.trim())
      assert.deepEqual(answer, {
        node: answer.node,
        created: { status: 'pending', secret_id: secretId },
        got: { status: 'pending', secret_id: secretId, amount: '0.02' },
        callback: [true, false],
        webhook: [true, false],
        missing: { isPaywatchError: true, status: 404, code: 'NOT_FOUND' },
      })
    })
  }
}

test('the packed declarations type-check in the empty project (import and require)', async () => {
  writeFileSync(
    join(project, 'typed.mts'),
    `import { createClient, verifyCallback, type PaymentRecord } from '@paywatch/client'
const client = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'pw_x' })
const record: PaymentRecord = await client.payments.get('id')
const status: string = record.status
const ok: boolean = await verifyCallback({ body: '{}', signature: 'x', publicKey: 'pem' })
export { status, ok }
`,
  )
  writeFileSync(
    join(project, 'typed.cts'),
    `import { verifyWebhook, PaywatchError } from '@paywatch/client'
export const checked: Promise<boolean> = verifyWebhook({ body: '{}', headers: {}, secret: 'whsec_x' })
export const isError = (value: unknown): boolean => value instanceof PaywatchError && value.problem.code === 'NOT_FOUND'
`,
  )
  const tsc = join(root, 'node_modules/typescript/bin/tsc')
  const options = {
    noEmit: true,
    strict: true,
    module: 'nodenext',
    target: 'es2022',
    lib: ['es2022', 'dom'],
    types: [],
    skipLibCheck: true,
  }
  const check = (files: string[]) => writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files }))
  check(['typed.mts', 'typed.cts'])
  const checked = await run(process.execPath, [tsc, '-p', '.'], { cwd: project }).catch((error: { stdout: string }) => error)
  assert.equal(checked.stdout, '', 'tsc reports nothing')
  // A wrong use is an error there: the types are real, not `any`.
  writeFileSync(join(project, 'wrong.mts'), `import { createClient } from '@paywatch/client'\ncreateClient({ baseUrl: 1 })\n`)
  check(['wrong.mts'])
  const wrong = await run(process.execPath, [tsc, '-p', '.'], { cwd: project }).catch((error: { stdout: string }) => error)
  assert.match(wrong.stdout, /wrong\.mts.*error TS2/)
})

/** package.json and package-lock.json of an empty project depending on the tarball, with openapi-fetch pinned as here. */
function installInto(project: string, tarball: string): void {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> }
  const dependency = { '@paywatch/client': `file:${tarball}` }
  mkdirSync(project, { recursive: true })
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, dependencies: dependency }))
  const pinned = Object.fromEntries(
    Object.entries(lock.packages).filter(
      ([path]) => path === 'node_modules/openapi-fetch' || path === 'node_modules/openapi-typescript-helpers',
    ),
  )
  const client = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8')) as { version: string; dependencies: object }
  writeFileSync(
    join(project, 'package-lock.json'),
    JSON.stringify({
      name: 'consumer',
      lockfileVersion: 3,
      requires: true,
      packages: {
        '': { name: 'consumer', dependencies: dependency },
        'node_modules/@paywatch/client': { version: client.version, resolved: `file:${tarball}`, dependencies: client.dependencies },
        ...pinned,
      },
    }),
  )
}

/** The consumer's script: the same checks through `import` or `require`; prints what it saw as JSON. */
function checkScript(load: string): string {
  return `${load}
;(async () => {
  const input = JSON.parse(process.argv[2])
  const client = createClient({ baseUrl: input.baseUrl, apiKey: input.apiKey })
  const created = await client.payments.create({ ...input.request, secret_id: input.secretId })
  const got = await client.payments.get(input.secretId)
  const missing = await client.payments.get('no-such-payment').catch((error) => error)
  const { body, signature } = input.callback
  const webhook = input.webhook
  console.log(JSON.stringify({
    node: process.version,
    created: { status: created.status, secret_id: created.secret_id },
    got: { status: got.status, secret_id: got.secret_id, amount: got.amount },
    callback: [
      await verifyCallback({ body, signature, publicKey: input.publicKey }),
      await verifyCallback({ body: body.replace('success', 'failure'), signature, publicKey: input.publicKey }),
    ],
    webhook: [
      await verifyWebhook({ body: new TextEncoder().encode(webhook.body), headers: webhook.headers, secret: webhook.secret }),
      await verifyWebhook({ body: webhook.body + ' ', headers: webhook.headers, secret: webhook.secret }),
    ],
    missing: { isPaywatchError: missing instanceof PaywatchError, status: missing.status, code: missing.problem && missing.problem.code },
  }))
})()
`
}
