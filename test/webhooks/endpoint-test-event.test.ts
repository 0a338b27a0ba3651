// POST /v2/endpoints/test (docs/api.md §8): any callback url the account may use, also before anything
// was delivered there; the callbacks' SSRF rules apply (a private url without
// PAYWATCH_ALLOW_PRIVATE_CALLBACKS is a 400 and nothing is sent); and test events go through the
// per-endpoint limit PAYWATCH_ENDPOINT_CONCURRENCY like deliveries, seen by a real receiver that counts
// the requests it holds at once.
import assert from 'node:assert/strict'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { startTestService, type TestService } from '../support/service.ts'
import { insertCompleted, startReceiver, type Receiver } from '../callbacks/support.ts'

const LIMIT = 2
let service: TestService
let guarded: TestService
let receiver: Receiver

before(async () => {
  receiver = await startReceiver(() => ({ status: 200 }))
  service = await startTestService({ background: false, env: { PAYWATCH_ENDPOINT_CONCURRENCY: String(LIMIT) } })
  guarded = await startTestService({ background: false, env: { PAYWATCH_ALLOW_PRIVATE_CALLBACKS: 'false' } })
})
after(async () => {
  await service?.close()
  await guarded?.close()
  await receiver?.close()
})

test('a url the account has not delivered to yet gets the test event (202)', async () => {
  const { apiKey } = await service.newAccount()
  const listed = await service.api(apiKey, { method: 'GET', url: '/v2/endpoints' })
  assert.deepEqual(listed.json(), [], 'no endpoint yet')
  const before = receiver.received.length
  const res = await service.api(apiKey, { method: 'POST', url: '/v2/endpoints/test', payload: { url: `${receiver.url}/new-hook` } })
  assert.equal(res.statusCode, 202, res.body)
  const [got] = (await receiver.waitFor(before + 1)).slice(before)
  assert.equal(got!.path, '/new-hook')
  assert.equal(got!.headers['x-paywatch-event'], 'test')
  assert.equal(got!.headers['x-delivery-id'], res.json().id)
})

test('the SSRF rules apply: a private, loopback or special url is refused 400 and nothing is sent', async () => {
  const { apiKey, accountId } = await guarded.newAccount()
  const before = receiver.received.length
  for (const url of [
    `${receiver.url}/hook`,
    'http://10.0.0.7/hook',
    'http://[::1]:8080/',
    'http://169.254.169.254/latest',
    'http://192.88.99.1/',
  ]) {
    const res = await guarded.api(apiKey, { method: 'POST', url: '/v2/endpoints/test', payload: { url } })
    assert.equal(res.statusCode, 400, `${url}: ${res.body}`)
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
    assert.equal(res.json().code, 'VALIDATION_FAILED')
    assert.equal(res.json().errors[0].path, 'url')
    assert.match(res.json().errors[0].message, /callbacks may only reach public addresses/)
  }
  const byAdmin = await guarded.admin({
    method: 'POST',
    url: `/admin/accounts/${accountId}/endpoints/test`,
    payload: { url: receiver.url },
  })
  assert.equal(byAdmin.statusCode, 400, byAdmin.body)
  const noAccount = await guarded.admin({ method: 'POST', url: '/admin/accounts/nobody/endpoints/test', payload: { url: receiver.url } })
  assert.equal(noAccount.statusCode, 404, noAccount.body)
  assert.equal(receiver.received.length, before, 'nothing reached the receiver')
})

test(`test events go through the per-endpoint limit: at most ${LIMIT} at once reach one receiver`, async () => {
  const held: ServerResponse[] = []
  let arrived = 0
  let most = 0
  let notify = () => {}
  const server = createServer((request, response) => {
    request.resume()
    // The payment's callback that makes the endpoint known is answered at once; test events are held.
    if (request.headers['x-paywatch-event'] !== 'test') return void response.writeHead(200).end()
    arrived++
    held.push(response)
    most = Math.max(most, held.length)
    notify()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  const until = (condition: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => (condition() ? resolve() : (notify = check))
      check()
    })
  try {
    const { apiKey, accountId } = await service.newAccount()
    // An endpoint with a delivery behind it, so that this test asks only about the limit.
    await insertCompleted(service.database.db, accountId, { callback: url })
    assert.equal(await service.callbacks.worker.runOnce(), 1)
    const COUNT = 8
    const answers = await Promise.all(
      Array.from({ length: COUNT }, () => service.api(apiKey, { method: 'POST', url: '/v2/endpoints/test', payload: { url } })),
    )
    for (const answer of answers) assert.equal(answer.statusCode, 202, answer.body)
    let released = 0
    while (released < COUNT) {
      // As many as the limit lets through are held; any more that the service sent would arrive meanwhile.
      await until(() => held.length >= Math.min(LIMIT, COUNT - released))
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
      held.shift()!.writeHead(200).end('ok')
      released++
    }
    assert.equal(arrived, COUNT, 'every test event arrived')
    assert.ok(most <= LIMIT, `${most} test events were in flight at once to one endpoint (limit ${LIMIT})`)
    assert.equal(most, LIMIT, 'the limit, not less, was used')
  } finally {
    for (const response of held) response.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})
