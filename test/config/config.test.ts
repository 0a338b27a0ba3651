// loadConfig(env): docs/api.md §1. Defaults, one ConfigError naming the variable for each
// bad value, config file merged under the environment.
import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, describe, test } from 'node:test'
import { ConfigError, loadConfig, trackedChains } from '../../src/config/config.ts'

const dir = mkdtempSync(join(tmpdir(), 'paywatch-config-'))
after(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
function configFile(content: unknown): string {
  const path = join(dir, `config-${files++}.json`)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
  return path
}

/** Asserts loadConfig refuses `env` with a one-line ConfigError mentioning `name`. */
function assertRefused(env: Record<string, string>, name: string | RegExp): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`)
      assert.equal(error.message.includes('\n'), false, 'one line')
      if (typeof name === 'string') assert.ok(error.message.includes(name), `"${error.message}" should name ${name}`)
      else assert.match(error.message, name)
      return true
    },
  )
}

describe('defaults', () => {
  test('an empty environment gives the documented defaults', () => {
    const config = loadConfig({})
    assert.equal(config.port, 3000)
    assert.equal(config.host, '127.0.0.1')
    assert.equal(config.databaseUrl, null)
    assert.equal(config.dataDir, resolve('./data'))
    assert.equal(config.redisUrl, null)
    assert.equal(config.adminToken, null)
    assert.equal(config.signingKey, null)
    assert.equal(config.trackingTimeoutSec, 86_400)
    assert.equal(config.callbackTimeoutSec, 10)
    assert.equal(config.allowPrivateCallbacks, false)
    assert.deepEqual(config.rate, { rps: 10, parallel: 10, daily: 14_400 })
    assert.deepEqual(trackedChains(config), [])
  })

  test('the known chains are built in with their chain ids', () => {
    const chains = loadConfig({}).chains
    const ids = Object.fromEntries(Object.values(chains).map((c) => [c.name, c.chainId]))
    assert.deepEqual(ids, {
      ethereum: 1,
      bsc: 56,
      polygon: 137,
      arbitrum: 42161,
      optimism: 10,
      base: 8453,
      avalanche: 43114,
      gnosis: 100,
      fantom: 250,
      worldchain: 480,
    })
    for (const chain of Object.values(chains)) {
      assert.equal(chain.nativeDecimals, 18)
      assert.ok(chain.wrapped, `${chain.name} has a wrapped native token`)
      assert.ok(chain.stablecoins.length > 0, `${chain.name} has stablecoins`)
      assert.ok(chain.multicall3)
      assert.deepEqual(chain.rpc, [])
    }
  })
})

describe('environment values', () => {
  test('each setting is read', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/pw',
      PAYWATCH_DATA_DIR: '/var/lib/pw',
      REDIS_URL: 'redis://cache:6379',
      PAYWATCH_ADMIN_TOKEN: 's3cret-admin-token-0123456789abcdef',
      PAYWATCH_TRACKING_TIMEOUT: '600',
      PAYWATCH_CALLBACK_TIMEOUT: '3',
      PAYWATCH_ALLOW_PRIVATE_CALLBACKS: 'true',
      PAYWATCH_RATE_RPS: '5',
      PAYWATCH_RATE_PARALLEL: '2',
      PAYWATCH_RATE_DAILY: '100',
      PAYWATCH_PREPARED_STATEMENTS: 'false',
      PAYWATCH_RPC_ETHEREUM: 'https://a.example, https://b.example',
      PAYWATCH_RPC_BSC: 'wss://bsc.example/ws',
    })
    assert.equal(config.port, 8080)
    assert.equal(config.host, '0.0.0.0')
    assert.equal(config.databaseUrl, 'postgres://u@db:5432/pw')
    assert.equal(config.dataDir, '/var/lib/pw')
    assert.equal(config.redisUrl, 'redis://cache:6379')
    assert.equal(config.adminToken, 's3cret-admin-token-0123456789abcdef')
    assert.equal(config.trackingTimeoutSec, 600)
    assert.equal(config.callbackTimeoutSec, 3)
    assert.equal(config.allowPrivateCallbacks, true)
    assert.deepEqual(config.rate, { rps: 5, parallel: 2, daily: 100 })
    assert.equal(config.preparedStatements, false)
    assert.deepEqual(config.chains.ethereum!.rpc, ['https://a.example', 'https://b.example'])
    assert.deepEqual(config.chains.bsc!.rpc, ['wss://bsc.example/ws'])
    assert.deepEqual(
      trackedChains(config)
        .map((c) => c.name)
        .sort(),
      ['bsc', 'ethereum'],
    )
  })

  test('an empty variable counts as unset', () => {
    assert.equal(loadConfig({ PORT: '', DATABASE_URL: '' }).port, 3000)
    assert.equal(loadConfig({ PAYWATCH_PREPARED_STATEMENTS: '' }).preparedStatements, true)
  })

  test('a signing key PEM is accepted, also with \\n escapes on one line', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    assert.equal(loadConfig({ PAYWATCH_SIGNING_KEY: pem }).signingKey, pem)
    assert.equal(loadConfig({ PAYWATCH_SIGNING_KEY: pem.replace(/\n/g, '\\n') }).signingKey, pem)
  })

  const bad: [string, Record<string, string>, string | RegExp][] = [
    ['PORT not a number', { PORT: 'eighty' }, 'PORT'],
    ['PORT out of range', { PORT: '70000' }, 'PORT'],
    ['PORT in hex', { PORT: '0x50' }, 'PORT'],
    ['PORT fractional', { PORT: '80.5' }, 'PORT'],
    ['DATABASE_URL not postgres', { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    ['REDIS_URL not redis', { REDIS_URL: 'http://cache' }, 'REDIS_URL'],
    ['PAYWATCH_TRACKING_TIMEOUT zero', { PAYWATCH_TRACKING_TIMEOUT: '0' }, 'PAYWATCH_TRACKING_TIMEOUT'],
    ['PAYWATCH_CALLBACK_TIMEOUT negative', { PAYWATCH_CALLBACK_TIMEOUT: '-1' }, 'PAYWATCH_CALLBACK_TIMEOUT'],
    ['PAYWATCH_ALLOW_PRIVATE_CALLBACKS not a boolean', { PAYWATCH_ALLOW_PRIVATE_CALLBACKS: 'maybe' }, 'PAYWATCH_ALLOW_PRIVATE_CALLBACKS'],
    ['PAYWATCH_PREPARED_STATEMENTS not a boolean', { PAYWATCH_PREPARED_STATEMENTS: 'sometimes' }, 'PAYWATCH_PREPARED_STATEMENTS'],
    ['PAYWATCH_RATE_RPS zero', { PAYWATCH_RATE_RPS: '0' }, 'PAYWATCH_RATE_RPS'],
    ['PAYWATCH_RATE_PARALLEL text', { PAYWATCH_RATE_PARALLEL: 'ten' }, 'PAYWATCH_RATE_PARALLEL'],
    ['PAYWATCH_RATE_DAILY exponent', { PAYWATCH_RATE_DAILY: '1e4' }, 'PAYWATCH_RATE_DAILY'],
    ['PAYWATCH_RPC_ETHEREUM not a URL', { PAYWATCH_RPC_ETHEREUM: 'localhost:8545' }, 'PAYWATCH_RPC_ETHEREUM'],
    ['PAYWATCH_RPC_ of an unknown chain', { PAYWATCH_RPC_ETHERIUM: 'https://a.example' }, 'PAYWATCH_RPC_ETHERIUM'],
    ['PAYWATCH_SIGNING_KEY not a PEM', { PAYWATCH_SIGNING_KEY: 'not a key' }, 'PAYWATCH_SIGNING_KEY'],
    ['LOG_LEVEL unknown', { LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    ['PAYWATCH_CONFIG missing file', { PAYWATCH_CONFIG: '/nonexistent/paywatch.json' }, 'PAYWATCH_CONFIG'],
  ]
  for (const [name, env, variable] of bad) {
    test(`refused: ${name}`, () => assertRefused(env, variable))
  }

  test('refused: a signing key that is not RSA', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    assertRefused({ PAYWATCH_SIGNING_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }, 'PAYWATCH_SIGNING_KEY')
  })
})

describe('config file', () => {
  test('settings in camelCase and chains merged over the built-in ones', () => {
    const config = loadConfig({
      PAYWATCH_CONFIG: configFile({
        port: 4000,
        adminToken: 'from-file-0123456789abcdef0123456789',
        rateRps: 20,
        allowPrivateCallbacks: true,
        trackingTimeout: 120,
        chains: {
          ethereum: {
            rpc: ['http://127.0.0.1:8545'],
            chainId: 31337,
            tokens: ['0x5fbdb2315678afecb367f032d93f642f64180aa3'],
            finalityDepth: 2,
          },
          devnet: { rpc: ['http://127.0.0.1:9545'], chainId: 1337, nativeSymbol: 'DEV' },
        },
      }),
    })
    assert.equal(config.port, 4000)
    assert.equal(config.adminToken, 'from-file-0123456789abcdef0123456789')
    assert.equal(config.rate.rps, 20)
    assert.equal(config.rate.parallel, 10)
    assert.equal(config.allowPrivateCallbacks, true)
    assert.equal(config.trackingTimeoutSec, 120)
    const ethereum = config.chains.ethereum!
    assert.equal(ethereum.chainId, 31337)
    assert.deepEqual(ethereum.rpc, ['http://127.0.0.1:8545'])
    assert.deepEqual(ethereum.tokens, ['0x5FbDB2315678afecb367f032d93F642f64180aa3'])
    assert.equal(ethereum.finalityDepth, 2)
    // Fields the file does not name keep their built-in values.
    assert.equal(ethereum.wrapped, '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2')
    assert.equal(ethereum.nativeSymbol, 'ETH')
    const devnet = config.chains.devnet!
    assert.equal(devnet.chainId, 1337)
    assert.equal(devnet.nativeSymbol, 'DEV')
    assert.equal(devnet.nativeDecimals, 18)
    assert.deepEqual(
      trackedChains(config)
        .map((c) => c.name)
        .sort(),
      ['devnet', 'ethereum'],
    )
  })

  test('the environment wins over the file', () => {
    const config = loadConfig({
      PAYWATCH_CONFIG: configFile({ port: 4000, rateRps: 20, chains: { ethereum: { rpc: ['http://file.example'], chainId: 5 } } }),
      PORT: '5000',
      PAYWATCH_RPC_ETHEREUM: 'http://env.example',
    })
    assert.equal(config.port, 5000)
    assert.equal(config.rate.rps, 20)
    assert.deepEqual(config.chains.ethereum!.rpc, ['http://env.example'])
    assert.equal(config.chains.ethereum!.chainId, 5)
  })

  test('PAYWATCH_RPC_ works for a chain the file adds', () => {
    const config = loadConfig({
      PAYWATCH_CONFIG: configFile({ chains: { 'my-chain': { chainId: 777 } } }),
      PAYWATCH_RPC_MY_CHAIN: 'http://127.0.0.1:1',
    })
    assert.deepEqual(config.chains['my-chain']!.rpc, ['http://127.0.0.1:1'])
  })

  const bad: [string, unknown, string | RegExp][] = [
    ['not JSON', '{ port: 1 ', 'PAYWATCH_CONFIG'],
    ['not an object', [1, 2], 'PAYWATCH_CONFIG'],
    ['a bad value names the setting', { port: 'x' }, 'port (config file)'],
    ['a wrong type', { adminToken: 5 }, 'adminToken (config file)'],
    ['an admin token shorter than 32 characters', { adminToken: 'change-me' }, 'adminToken (config file)'],
    ['an unknown setting', { rateRPS: 5 }, 'rateRPS'],
    ['chains not an object', { chains: [] }, 'chains'],
    ['a chain not an object', { chains: { ethereum: 'x' } }, 'chains.ethereum'],
    ['a new chain without chainId', { chains: { devnet: { rpc: ['http://a.example'] } } }, 'chains.devnet'],
    ['an invalid chain name', { chains: { 'Dev Net': { chainId: 1 } } }, 'Dev Net'],
    ['a chain rpc not an array', { chains: { ethereum: { rpc: 'http://a.example' } } }, 'chains.ethereum'],
    ['a chain rpc not a URL', { chains: { ethereum: { rpc: ['ftp://a'] } } }, 'chains.ethereum'],
    ['a chain address invalid', { chains: { ethereum: { tokens: ['0x12'] } } }, 'chains.ethereum'],
    ['a chain number invalid', { chains: { ethereum: { chainId: -1 } } }, 'chains.ethereum'],
    ['an unknown chain field', { chains: { ethereum: { rpcs: ['http://a.example'] } } }, 'chains.ethereum.rpcs'],
    ['an rpc object without url', { chains: { ethereum: { rpc: [{ rps: 5 }] } } }, 'chains.ethereum.rpc'],
    ['an rpc rps not positive', { chains: { ethereum: { rpc: [{ url: 'http://a.example', rps: 0 }] } } }, 'chains.ethereum.rpc'],
    ['an rpc object with another field', { chains: { ethereum: { rpc: [{ url: 'http://a.example', key: 1 }] } } }, 'chains.ethereum.rpc'],
    ['a quorum of 0', { chains: { ethereum: { quorum: 0 } } }, 'chains.ethereum.quorum'],
    ['a maxHeadAgeSeconds not a number', { chains: { ethereum: { maxHeadAgeSeconds: 'x' } } }, 'chains.ethereum.maxHeadAgeSeconds'],
    // Not taken for a built-in chain because every object has such a property.
    ['a new chain named like an object property', { chains: { constructor: { rpc: ['http://a.example'] } } }, 'chains.constructor'],
  ]
  for (const [name, content, variable] of bad) {
    test(`refused: ${name}`, () => assertRefused({ PAYWATCH_CONFIG: configFile(content) }, variable))
  }
})

describe('chain providers', () => {
  test('rpc items are URLs or {url, rps}; quorum and maxHeadAgeSeconds are read; built-in ages apply', () => {
    const config = loadConfig({
      PAYWATCH_CONFIG: configFile({
        chains: {
          ethereum: { rpc: ['http://a.example', { url: 'http://b.example/key', rps: 25 }], quorum: 2, maxHeadAgeSeconds: null },
        },
      }),
    })
    const ethereum = config.chains.ethereum!
    assert.deepEqual(ethereum.rpc, ['http://a.example', 'http://b.example/key'])
    assert.deepEqual(ethereum.rpcRps, [null, 25])
    assert.equal(ethereum.quorum, 2)
    assert.equal(ethereum.maxHeadAgeSeconds, null)
    assert.equal(config.chains.bsc!.quorum, 1)
    assert.equal(config.chains.bsc!.maxHeadAgeSeconds, 60)
    assert.equal(loadConfig({}).chains.ethereum!.maxHeadAgeSeconds, 120)
    // The environment stays comma-separated URLs, without a budget.
    const fromEnv = loadConfig({ PAYWATCH_RPC_BSC: 'https://a.example,https://b.example' }).chains.bsc!
    assert.deepEqual(fromEnv.rpcRps, [null, null])
  })
})

describe('admin token', () => {
  test('a token shorter than 32 characters stops the start with one line naming PAYWATCH_ADMIN_TOKEN', () => {
    assertRefused({ PAYWATCH_ADMIN_TOKEN: 'change-me' }, 'PAYWATCH_ADMIN_TOKEN')
    assertRefused({ PAYWATCH_ADMIN_TOKEN: 'x'.repeat(31) }, /PAYWATCH_ADMIN_TOKEN must be at least 32 characters/)
    assert.equal(loadConfig({ PAYWATCH_ADMIN_TOKEN: 'x'.repeat(32) }).adminToken, 'x'.repeat(32))
  })
})

describe('secrets key', () => {
  const key = Buffer.from('00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff', 'hex')

  test('unset by default; 64 hex characters or 44 base64 characters give the same 32 bytes', () => {
    assert.equal(loadConfig({}).secretsKey, null)
    assert.deepEqual(loadConfig({ PAYWATCH_SECRETS_KEY: key.toString('hex') }).secretsKey, key)
    assert.deepEqual(loadConfig({ PAYWATCH_SECRETS_KEY: key.toString('hex').toUpperCase() }).secretsKey, key)
    assert.deepEqual(loadConfig({ PAYWATCH_SECRETS_KEY: key.toString('base64') }).secretsKey, key)
    assert.deepEqual(loadConfig({ PAYWATCH_CONFIG: configFile({ secretsKey: key.toString('base64') }) }).secretsKey, key)
  })

  for (const [name, value] of [
    ['too short', 'abcdef'],
    ['63 hex characters', key.toString('hex').slice(1)],
    ['65 hex characters', `${key.toString('hex')}0`],
    ['64 characters that are not hex', 'g'.repeat(64)],
    ['base64 of 31 bytes', key.subarray(1).toString('base64')],
    ['base64 of 33 bytes', Buffer.concat([key, Buffer.from([1])]).toString('base64')],
    ['a passphrase', 'correct horse battery staple correct horse battery'],
  ] as const) {
    test(`refused: ${name}`, () => {
      assertRefused({ PAYWATCH_SECRETS_KEY: value }, 'PAYWATCH_SECRETS_KEY')
      assertRefused({ PAYWATCH_SECRETS_KEY: value }, /32 bytes/)
    })
  }

  test('refused from the config file too, naming the setting', () => {
    assertRefused({ PAYWATCH_CONFIG: configFile({ secretsKey: 'short' }) }, 'secretsKey (config file)')
    assertRefused({ PAYWATCH_CONFIG: configFile({ secretsKey: 42 }) }, 'secretsKey (config file)')
  })
})
