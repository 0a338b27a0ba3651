// Chain identity: the node remembers each chain's id and the hash of an early block. A development
// node restarted under the same URL (same chain id, another chain) is refused with one error line
// naming the URL (its secret path masked), /readyz answers 503 listing the provider as refused,
// and the stored progress is never applied to the new chain: not while running, not after a restart.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import pino from 'pino'
import { mine, startAnvil, type Anvil } from '../support/index.ts'
import { createFreshDatabaseUrl, dropDatabase } from '../support/database.ts'
import { startFaultyRpcProxy, type FaultyRpcProxy } from '../support/faulty-rpc-proxy.ts'
import { seedEmbeddedDataDir } from '../support/pglite-template.ts'
import type { TestService } from '../support/service.ts'
import { engineAtHead, startEngineService, waitFor } from './support.ts'

const cleanup: (() => Promise<void>)[] = []
let databaseUrl: string | null
const dataDir = mkdtempSync(join(tmpdir(), 'paywatch-identity-'))

before(async () => {
  databaseUrl = await createFreshDatabaseUrl()
  if (!databaseUrl) await seedEmbeddedDataDir(dataDir)
})
after(async () => {
  for (const step of cleanup.reverse()) await step()
  if (databaseUrl) await dropDatabase(databaseUrl)
  rmSync(dataDir, { recursive: true, force: true })
})

interface Logged {
  level: number
  msg: string
  [field: string]: unknown
}

/** The service on the same database every time, following `url` as `ethereum`, its log lines kept. */
async function start(anvil: Anvil, url: string, lines: Logged[]): Promise<TestService> {
  const logger = pino({ level: 'info' }, { write: (raw: string) => void lines.push(JSON.parse(raw) as Logged) })
  const service = await startEngineService(anvil, {
    logger,
    env: databaseUrl ? { DATABASE_URL: databaseUrl } : { PAYWATCH_DATA_DIR: dataDir },
    chain: { rpc: [url], maxHeadAgeSeconds: null },
  })
  const close = service.close
  const step = () => close()
  cleanup.push(step)
  service.close = async () => {
    cleanup.splice(cleanup.indexOf(step), 1)
    await close()
  }
  return service
}

const refusals = (lines: Logged[]) => lines.filter((line) => line.level >= 50 && /refused/.test(line.msg))

async function readyz(service: TestService) {
  const response = await service.app.inject({ method: 'GET', url: '/readyz' })
  return { status: response.statusCode, body: response.json(), raw: response.body }
}

let proxy: FaultyRpcProxy
let first: Anvil

test('a node restarted under the same URL is refused while the service runs', async () => {
  first = await startAnvil()
  cleanup.push(() => first.stop())
  proxy = await startFaultyRpcProxy(first.rpcUrl)
  cleanup.push(() => proxy.close())
  // A provider URL with an API key in its path: never shown.
  const url = `${proxy.url}/v2/secret-api-key`
  const lines: Logged[] = []
  const service = await start(first, url, lines)
  await mine(first, 3)
  await engineAtHead(service, first)
  const ready = await readyz(service)
  assert.equal(ready.status, 200, ready.raw)
  assert.deepEqual(
    ready.body.chains[0].providers.map((p: { url: string; state: string }) => [p.url, p.state]),
    [[`${proxy.url}/***`, 'ok']],
  )
  assert.ok(ready.body.chains[0].providers[0].capabilities.includes('debug_traceTransaction'), ready.raw)
  const processed = service.engine.runner('ethereum')!.follower!.state.head!

  // The node is restarted: same URL, same chain id, another chain (its block 0 differs).
  const second = await startAnvil()
  cleanup.push(() => second.stop())
  proxy.setUpstream(second.rpcUrl)
  await service.engine.probeProviders()

  const refused = refusals(lines)
  assert.equal(refused.length, 1, 'one error line')
  assert.match(
    refused[0]!.msg,
    new RegExp(`RPC provider ${proxy.url.replace(/[.:/]/g, '\\$&')}/\\*\\*\\* refused: it serves another chain`),
  )
  assert.ok(!JSON.stringify(lines).includes('secret-api-key'), 'the key in the URL is never logged')
  const after = await readyz(service)
  assert.equal(after.status, 503)
  assert.equal(after.body.chains[0].ok, false)
  assert.equal(after.body.chains[0].providers[0].state, 'refused')
  assert.ok(!after.raw.includes('secret-api-key'))
  // Nothing of the new chain was applied to the stored progress.
  await service.engine.syncNow().catch(() => {})
  const head = service.engine.runner('ethereum')!.follower?.state.head
  assert.ok(head === undefined || head.hash === processed.hash || head.number <= processed.number, 'no block of the new chain processed')
  const metrics = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  assert.match(metrics, /paywatch_rpc_provider_requests_total\{chain="ethereum",provider="http:\/\/127\.0\.0\.1:\d+\/\*\*\*"\} \d+/)
  await service.close()
})

test('a restarted service on the stored progress of another chain refuses the provider and is not ready', async () => {
  const lines: Logged[] = []
  const service = await start(first, `${proxy.url}/v2/secret-api-key`, lines)
  await waitFor('the chain to be refused', async () => (service.engine.runner('ethereum')!.status === 'disabled' ? true : undefined))
  assert.equal(refusals(lines).length, 1, 'one error line naming the provider')
  assert.equal(service.engine.runner('ethereum')!.follower, undefined, 'never followed')
  const ready = await readyz(service)
  assert.equal(ready.status, 503)
  assert.equal(ready.body.chains[0].providers[0].state, 'refused')
  assert.equal(ready.body.chains[0].error, 'the RPC serves another network')
})
