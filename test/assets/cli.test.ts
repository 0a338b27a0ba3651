import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { getAddress, type Address } from 'viem'
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts'
import {
  addLiquidity,
  createPair,
  deployMulticall3,
  deployToken,
  deployUniswapV2,
  deployWeth,
  mintToken,
  sendNative,
  startAnvil,
  type Anvil,
} from '../support/index.ts'

let anvil: Anvil
let env: NodeJS.ProcessEnv
let holder: Address
let weth: Address
let usdc: Address

function paywatch(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['src/cli/main.ts', ...args], { env, cwd: process.cwd() }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })
    })
  })
}

before(async () => {
  anvil = await startAnvil()
  const multicall3 = await deployMulticall3(anvil, { canonical: true })
  const factory = await deployUniswapV2(anvil)
  weth = getAddress(await deployWeth(anvil))
  usdc = getAddress(await deployToken(anvil, 'USD Coin', 'USDC', 6))
  const me = anvil.walletClient.account.address
  await mintToken(anvil, weth, me, 4n * 10n ** 18n)
  await mintToken(anvil, usdc, me, 10_000n * 10n ** 6n)
  await addLiquidity(anvil, await createPair(anvil, factory, weth, usdc), weth, 4n * 10n ** 18n, usdc, 10_000n * 10n ** 6n)
  holder = privateKeyToAddress(generatePrivateKey())
  await sendNative(anvil, anvil.accounts[1]!, holder, 42n)
  await mintToken(anvil, usdc, holder, 7_000_000n)

  const dir = mkdtempSync(join(tmpdir(), 'paywatch-cli-'))
  const configFile = join(dir, 'config.json')
  writeFileSync(
    configFile,
    JSON.stringify({
      chains: {
        ethereum: {
          rpc: [anvil.rpcUrl],
          chainId: anvil.chainId,
          multicall3,
          wrapped: weth,
          stablecoins: [usdc],
          tokens: [],
          uniswapV2Factories: [factory],
        },
      },
    }),
  )
  env = { PATH: process.env.PATH, PAYWATCH_CONFIG: configFile, PAYWATCH_DATA_DIR: dir }
})
after(async () => {
  await anvil?.stop()
})

test('paywatch assets and paywatch price print what the endpoints answer', async () => {
  const [assets, price, native] = await Promise.all([
    paywatch('assets', 'ethereum', holder),
    paywatch('price', 'ethereum', weth),
    paywatch('price', 'ethereum', '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'),
  ])
  assert.equal(assets.code, 0, assets.stderr)
  assert.deepEqual(JSON.parse(assets.stdout), [
    { name: 'Ether', symbol: 'ETH', address: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE', balance: '42', decimals: 18, type: 'NATIVE' },
    { name: 'USD Coin', symbol: 'USDC', address: usdc, balance: '7000000', decimals: 6, type: '20' },
  ])
  assert.equal(price.code, 0, price.stderr)
  assert.equal(price.stdout, '2500\n')
  assert.equal(native.stdout, '2500\n')
})

test('an untracked chain, a bad address or a token without route ends with a message and exit code 1', async () => {
  const [chain, address, route] = await Promise.all([
    paywatch('assets', 'atlantis', holder),
    paywatch('assets', 'ethereum', '0x12'),
    paywatch('price', 'ethereum', holder),
  ])
  assert.equal(chain.code, 1)
  assert.match(chain.stderr, /blockchain "atlantis" is not tracked \(tracked: ethereum/)
  assert.equal(address.code, 1)
  assert.match(address.stderr, /not a 0x-prefixed 20-byte hex address/)
  assert.equal(route.code, 1)
  assert.match(route.stderr, /no price route/)
  assert.equal(route.stdout, '')
})
