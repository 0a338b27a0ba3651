import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, test } from 'node:test'
import pino from 'pino'
import { privateKeyToAddress, generatePrivateKey } from 'viem/accounts'
import { getAddress, type Address } from 'viem'
import { createAssetsReader } from '../../src/chain/assets-reader.ts'
import { ChainUnavailableError } from '../../src/chain/errors.ts'
import { ProviderPool } from '../../src/chain/provider-pool.ts'
import { createRpcClient } from '../../src/chain/rpc-client.ts'
import {
  MULTICALL3_ADDRESS,
  deployMulticall3,
  deployRevertingToken,
  deployToken,
  deployWeth,
  mintToken,
  sendNative,
  startAnvil,
  type Anvil,
} from '../support/index.ts'
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.ts'
import { startTestService, type TestService } from '../support/service.ts'

const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
const NAME_SELECTOR = '06fdde03'

let anvil: Anvil
let proxy: RpcProxy
let service: TestService
let apiKey: string
let holder: Address
const tokens = {} as Record<'weth' | 'usdc' | 'dai' | 'unheld' | 'reverting', Address>
const logLines: { level: number; msg: string; token?: string }[] = []

const rateEnv = { PAYWATCH_RATE_RPS: '1000', PAYWATCH_RATE_PARALLEL: '100' }
const chainConfig = (multicall3: Address | null) => ({
  rpc: [proxy.url],
  chainId: anvil.chainId,
  multicall3,
  wrapped: tokens.weth,
  stablecoins: [tokens.usdc, tokens.dai],
  tokens: [tokens.unheld, tokens.reverting, tokens.usdc],
  uniswapV2Factories: [],
})
const assetsOf = (svc: TestService, account: string, blockchain = 'ethereum') =>
  svc.api(apiKey, { method: 'GET', url: `/v2/accounts/${blockchain}/${account}/assets` })

before(async () => {
  anvil = await startAnvil()
  proxy = await startRpcProxy(anvil.rpcUrl)
  const multicall3 = await deployMulticall3(anvil)
  tokens.weth = getAddress(await deployWeth(anvil))
  tokens.usdc = getAddress(await deployToken(anvil, 'USD Coin', 'USDC', 6))
  tokens.dai = getAddress(await deployToken(anvil, 'Dai Stablecoin', 'DAI', 18))
  tokens.unheld = getAddress(await deployToken(anvil, 'Unheld', 'NONE', 18))
  tokens.reverting = getAddress(await deployRevertingToken(anvil))
  holder = privateKeyToAddress(generatePrivateKey())
  await sendNative(anvil, anvil.accounts[1]!, holder, 1_500_000_000_000_000_000n)
  await mintToken(anvil, tokens.weth, holder, 1n)
  await mintToken(anvil, tokens.usdc, holder, 1_234_567n)
  await mintToken(anvil, tokens.dai, holder, 5n * 10n ** 18n)
  await mintToken(anvil, tokens.unheld, anvil.accounts[2]!.address, 7n) // someone else's

  const logs = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line))
      done()
    },
  })
  service = await startTestService({
    chains: { ethereum: chainConfig(multicall3) },
    env: rateEnv,
    background: false,
    logger: pino({ level: 'debug' }, logs),
  })
  apiKey = (await service.newAccount()).apiKey
})
after(async () => {
  await service?.close()
  await proxy?.close()
  await anvil?.stop()
})

const expectedAssets = () => [
  { name: 'Ether', symbol: 'ETH', address: NATIVE, balance: '1500000000000000000', decimals: 18, type: 'NATIVE' },
  { name: 'Wrapped Ether', symbol: 'WETH', address: tokens.weth, balance: '1', decimals: 18, type: '20' },
  { name: 'USD Coin', symbol: 'USDC', address: tokens.usdc, balance: '1234567', decimals: 6, type: '20' },
  { name: 'Dai Stablecoin', symbol: 'DAI', address: tokens.dai, balance: '5000000000000000000', decimals: 18, type: '20' },
]

test('lists the native balance first, then held tokens, in one Multicall3 round trip with metadata', async () => {
  proxy.reset()
  const res = await assetsOf(service, holder.toLowerCase())
  assert.equal(res.statusCode, 200, res.body)
  // The zero-balance token and the token whose balanceOf reverts are left out; USDC listed twice appears once.
  assert.deepEqual(res.json(), expectedAssets())
  assert.equal(proxy.requests.length, 1, 'a cold request reads balances and metadata together')
  assert.deepEqual(proxy.requests[0]!.methods, ['eth_call'])
  assert.ok(proxy.requests[0]!.raw.includes(NAME_SELECTOR), 'metadata read in the same multicall')
})

test('a warm request is exactly one round trip and reads no metadata again', async () => {
  proxy.reset()
  const res = await assetsOf(service, holder)
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual(res.json(), expectedAssets())
  assert.equal(proxy.requests.length, 1)
  assert.ok(!proxy.requests[0]!.raw.includes(NAME_SELECTOR), 'metadata comes from the cache')
})

test('the reverting token is logged, never a 500', () => {
  const line = logLines.find((l) => l.token === tokens.reverting)
  assert.ok(line, 'a log line names the failing token')
  assert.equal(line.level, 40, 'warn')
  assert.match(line.msg, /left out/)
})

test('an account holding nothing has no assets', async () => {
  const res = await assetsOf(service, privateKeyToAddress(generatePrivateKey()))
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual(res.json(), [])
})

test('an invalid address is a 400 VALIDATION_FAILED, an unknown or untracked chain a 400 UNSUPPORTED_BLOCKCHAIN', async () => {
  const invalid = await assetsOf(service, '0x1234')
  assert.equal(invalid.statusCode, 400)
  assert.equal(invalid.headers['content-type'], 'application/problem+json; charset=utf-8')
  assert.equal(invalid.json().code, 'VALIDATION_FAILED')
  assert.deepEqual(invalid.json().errors, [{ path: 'account', message: 'must be a 0x-prefixed 20-byte hex address' }])
  for (const chain of ['atlantis', 'bsc', 'ETHEREUM']) {
    const res = await assetsOf(service, holder, chain)
    assert.equal(res.statusCode, 400, chain)
    assert.equal(res.json().code, 'UNSUPPORTED_BLOCKCHAIN')
  }
})

test('without an API key the endpoint answers 401', async () => {
  const res = await service.app.inject({ method: 'GET', url: `/v2/accounts/ethereum/${holder}/assets` })
  assert.equal(res.statusCode, 401)
})

test('an unreachable RPC is a 503 CHAIN_UNAVAILABLE', async () => {
  proxy.setDown(true)
  try {
    const res = await assetsOf(service, holder)
    assert.equal(res.statusCode, 503, res.body)
    assert.equal(res.json().code, 'CHAIN_UNAVAILABLE')
    assert.equal(res.headers['retry-after'], '5')
  } finally {
    proxy.setDown(false)
  }
})

// The readers themselves, on chain handles configured differently from the service's.
const readerOn = (multicall3: Address | null) => {
  const config = { ...service.config.chains.ethereum!, multicall3 }
  return {
    chain: {
      config,
      client: createRpcClient(config),
      pool: new ProviderPool({
        chain: 'ethereum',
        urls: config.rpc,
        rps: config.rpcRps,
        clock: () => new Date(),
        logger: pino({ level: 'silent' }),
      }),
      providerClients: [],
      decimalsOf: async () => 18,
    },
    reader: createAssetsReader(pino({ level: 'silent' })),
  }
}
const shapes = () => proxy.requests.map((r) => (Array.isArray(r.body) ? 'batch' : r.methods[0]))

test('without Multicall3 the same assets come from one JSON-RPC batch', async () => {
  const { chain, reader } = readerOn(null)
  for (const round of ['cold', 'warm']) {
    proxy.reset()
    assert.deepEqual(await reader.assetsOf(chain, holder), expectedAssets(), round)
    assert.deepEqual(shapes(), ['batch'], `${round}: one HTTP request carrying a JSON-RPC batch`)
    const methods = proxy.requests[0]!.methods
    assert.equal(methods[0], 'eth_getBalance')
    // native + 5 distinct listed tokens, plus name/symbol/decimals of each on the cold request only
    assert.equal(methods.length, round === 'cold' ? 1 + 5 + 15 : 1 + 5, round)
  }
})

test('an unreachable RPC fails the JSON-RPC batch path as a whole', async () => {
  const { chain, reader } = readerOn(null)
  proxy.setDown(true)
  try {
    await assert.rejects(reader.assetsOf(chain, holder), ChainUnavailableError)
  } finally {
    proxy.setDown(false)
  }
})

test('an RPC that refuses the calls (rate limited) is a 503 on both paths, never a partial list', async () => {
  proxy.setRefusal({ code: -32005, message: 'rate limit exceeded' })
  try {
    const res = await assetsOf(service, holder)
    assert.equal(res.statusCode, 503, res.body)
    assert.equal(res.json().code, 'CHAIN_UNAVAILABLE')
    const { chain, reader } = readerOn(null)
    await assert.rejects(reader.assetsOf(chain, holder), ChainUnavailableError)
  } finally {
    proxy.setRefusal(null)
  }
})

test('a configured Multicall3 address without a contract falls back to JSON-RPC batches for good', async () => {
  const { chain, reader } = readerOn(MULTICALL3_ADDRESS)
  proxy.reset()
  assert.deepEqual(await reader.assetsOf(chain, holder), expectedAssets())
  assert.deepEqual(shapes(), ['eth_call', 'batch'])
  proxy.reset()
  assert.deepEqual(await reader.assetsOf(chain, holder), expectedAssets())
  assert.deepEqual(shapes(), ['batch'])
})
