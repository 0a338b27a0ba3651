import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startAnvil, type Anvil } from '../support/index.ts'
import { startTestService, type TestService } from '../support/service.ts'

let anvil: Anvil
let service: TestService
before(async () => {
  anvil = await startAnvil()
  service = await startTestService({ chains: { ethereum: { rpc: [anvil.rpcUrl], chainId: anvil.chainId } } })
})
after(async () => {
  await service?.close()
  await anvil?.stop()
})

test('creates a native payment tracking', async () => {
  const { apiKey } = await service.newAccount()
  const res = await service.api(apiKey, {
    method: 'POST',
    url: '/v2/payments',
    payload: {
      blockchain: 'ethereum',
      sender: anvil.accounts[1]!.address,
      nonce: 0,
      receiver: anvil.accounts[2]!.address,
      token: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
      amount: '1.0',
      after_block: 0,
      secret_id: 'abc-123',
      callback: 'https://example.com/cb',
    },
  })
  assert.equal(res.statusCode, 201, res.body)
  assert.equal(res.json().amount, '1')
})
