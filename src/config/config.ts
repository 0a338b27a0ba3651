import { createPrivateKey, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { ChainConfig } from './chains.ts'
import { loadChains } from './chain-settings.ts'
import { ConfigError } from './config-error.ts'

export { ConfigError }

export interface RateLimitConfig {
  rps: number
  parallel: number
  daily: number
}

export interface Config {
  port: number
  host: string
  databaseUrl: string | null
  dataDir: string
  redisUrl: string | null
  adminToken: string | null
  signingKey: string | null
  /** 32 bytes sealing the signing keys stored in the database; null stores them as plaintext. */
  secretsKey: Buffer | null
  trackingTimeoutSec: number
  callbackTimeoutSec: number
  /** Seconds a client has to send a whole request (headers and body); then 408 and the connection closes. */
  requestTimeoutSec: number
  allowPrivateCallbacks: boolean
  /** Callback attempts in flight at once to one endpoint (account, scheme://host[:port]). */
  endpointConcurrency: number
  /** Seconds of nothing but failed attempts after which an endpoint is disabled. */
  endpointDisableAfterSec: number
  rate: RateLimitConfig
  /** Failed authentications one client address may make a minute; then 429 until the minute ends. */
  authFailures: number
  logLevel: string
  priceCacheMs: number
  /** Name the statements run often on PostgreSQL (off behind a pooler that cannot keep them). */
  preparedStatements: boolean
  /** Embedded database only: PostgreSQL's shared_buffers inside PGlite, in MB (its default, 128, costs ~120 MB of RSS). */
  embeddedSharedBuffersMb: number
  /** Open `/cable` WebSockets one node accepts; more are refused with a 503 (each one holds memory). */
  cableMaxConnections: number
  /** Open `/cable` WebSockets one client address (an IPv6 /64) may hold on a node; more are refused with a 429. */
  cableMaxConnectionsPerAddress: number
  /** New `/cable` connections one address may open at once, and per second after that (a token bucket). */
  cableConnectBurst: number
  cableConnectsPerSecond: number
  /** PaymentChannel subscriptions one socket may hold; more are answered `reject_subscription`. */
  cableMaxSubscriptions: number
  /** Every known chain, tracked or not; `rpc` is empty for chains that are not tracked. */
  chains: Record<string, ChainConfig>
}

type Source = Record<string, unknown>

/**
 * Reads the configuration once: environment first, then the optional JSON file named by
 * `PAYWATCH_CONFIG` (same settings in camelCase plus `chains`). This is the only module that reads
 * `process.env`; everything else receives a `Config`.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const file = env.PAYWATCH_CONFIG ? readConfigFile(env.PAYWATCH_CONFIG) : {}
  /** Settings of the config file that something read: any other key is a typo, refused below. */
  const fileKeys = new Set(['chains'])
  const pick = (envName: string, key: string): { name: string; value: unknown } | undefined => {
    fileKeys.add(key)
    const fromEnv = env[envName]
    if (fromEnv !== undefined && fromEnv !== '') return { name: envName, value: fromEnv }
    if (file[key] !== undefined && file[key] !== null) return { name: `${key} (config file)`, value: file[key] }
    return undefined
  }
  const int = (envName: string, key: string, fallback: number, min: number, max: number): number => {
    const got = pick(envName, key)
    if (!got) return fallback
    const text = String(got.value).trim()
    // Digits only: Number() would also take "0x10", "1e3" or "" for numbers.
    const n = typeof got.value === 'number' ? got.value : /^-?\d{1,16}$/.test(text) ? Number(text) : NaN
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(`${got.name} must be an integer from ${min} to ${max}, got ${JSON.stringify(got.value)}`)
    }
    return n
  }
  const str = (envName: string, key: string): string | null => {
    const got = pick(envName, key)
    if (!got) return null
    if (typeof got.value !== 'string') throw new ConfigError(`${got.name} must be a string`)
    return got.value
  }
  const bool = (envName: string, key: string, fallback: boolean): boolean => {
    const got = pick(envName, key)
    if (!got) return fallback
    if (typeof got.value === 'boolean') return got.value
    const v = String(got.value).trim().toLowerCase()
    if (['true', '1', 'yes'].includes(v)) return true
    if (['false', '0', 'no'].includes(v)) return false
    throw new ConfigError(`${got.name} must be true or false (or 1/0, yes/no), got ${JSON.stringify(got.value)}`)
  }

  const databaseUrl = str('DATABASE_URL', 'databaseUrl')
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL')
  }
  const redisUrl = str('REDIS_URL', 'redisUrl')
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL must be a redis:// URL')
  const signingKey = signingKeyPem(str('PAYWATCH_SIGNING_KEY', 'signingKey'))
  const logLevel = str('LOG_LEVEL', 'logLevel') ?? 'info'
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`)
  }

  const config: Config = {
    port: int('PORT', 'port', 3000, 0, 65535),
    host: str('HOST', 'host') ?? '127.0.0.1',
    databaseUrl,
    dataDir: resolve(str('PAYWATCH_DATA_DIR', 'dataDir') ?? DEFAULT_DATA_DIR),
    redisUrl,
    adminToken: adminTokenOf(str('PAYWATCH_ADMIN_TOKEN', 'adminToken'), pick('PAYWATCH_ADMIN_TOKEN', 'adminToken')?.name),
    signingKey,
    secretsKey: secretsKeyOf(str('PAYWATCH_SECRETS_KEY', 'secretsKey'), pick('PAYWATCH_SECRETS_KEY', 'secretsKey')?.name),
    trackingTimeoutSec: int('PAYWATCH_TRACKING_TIMEOUT', 'trackingTimeout', 86400, 1, 365 * 86400),
    callbackTimeoutSec: int('PAYWATCH_CALLBACK_TIMEOUT', 'callbackTimeout', 10, 1, 600),
    requestTimeoutSec: int('PAYWATCH_REQUEST_TIMEOUT', 'requestTimeout', 30, 1, 3600),
    allowPrivateCallbacks: bool('PAYWATCH_ALLOW_PRIVATE_CALLBACKS', 'allowPrivateCallbacks', false),
    endpointConcurrency: int('PAYWATCH_ENDPOINT_CONCURRENCY', 'endpointConcurrency', 10, 1, 10_000),
    endpointDisableAfterSec: int('PAYWATCH_ENDPOINT_DISABLE_AFTER', 'endpointDisableAfter', 432_000, 1, 365 * 86400),
    rate: {
      rps: int('PAYWATCH_RATE_RPS', 'rateRps', 10, 1, 1_000_000),
      parallel: int('PAYWATCH_RATE_PARALLEL', 'rateParallel', 10, 1, 1_000_000),
      daily: int('PAYWATCH_RATE_DAILY', 'rateDaily', 14400, 1, 1_000_000_000),
    },
    authFailures: int('PAYWATCH_AUTH_FAILURES', 'authFailures', 100, 1, 1_000_000),
    logLevel,
    priceCacheMs: int('PAYWATCH_PRICE_CACHE_MS', 'priceCacheMs', 30_000, 0, 86_400_000),
    preparedStatements: bool('PAYWATCH_PREPARED_STATEMENTS', 'preparedStatements', true),
    embeddedSharedBuffersMb: int('PAYWATCH_EMBEDDED_SHARED_BUFFERS_MB', 'embeddedSharedBuffersMb', 16, 1, 4096),
    cableMaxConnections: int('PAYWATCH_CABLE_MAX_CONNECTIONS', 'cableMaxConnections', 10_000, 1, 1_000_000),
    cableMaxConnectionsPerAddress: int('PAYWATCH_CABLE_MAX_CONNECTIONS_PER_ADDRESS', 'cableMaxConnectionsPerAddress', 100, 1, 1_000_000),
    cableConnectBurst: int('PAYWATCH_CABLE_CONNECT_BURST', 'cableConnectBurst', 100, 1, 1_000_000),
    cableConnectsPerSecond: int('PAYWATCH_CABLE_CONNECTS_PER_SECOND', 'cableConnectsPerSecond', 10, 1, 1_000_000),
    cableMaxSubscriptions: int('PAYWATCH_CABLE_MAX_SUBSCRIPTIONS', 'cableMaxSubscriptions', 20, 1, 1000),
    chains: loadChains(env, file.chains),
  }
  const unknown = Object.keys(file).filter((key) => !fileKeys.has(key))
  if (unknown.length > 0) throw new ConfigError(`${unknown[0]} (config file) is not a Paywatch setting`)
  return config
}

/** The admin token opens everything: one short enough to guess is refused at start. */
export const MIN_ADMIN_TOKEN_LENGTH = 32

/** The data folder when none is configured, relative to the working directory. */
export const DEFAULT_DATA_DIR = './data'

function adminTokenOf(value: string | null, name = 'PAYWATCH_ADMIN_TOKEN'): string | null {
  if (value !== null && value.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(`${name} must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32), got ${value.length}`)
  }
  return value
}

/**
 * The AES-256 key sealing stored signing keys: exactly 32 bytes, as 64 hex characters or 44 base64
 * characters (openssl rand -hex 32). A passphrase is refused rather than stretched: the key must be random.
 */
function secretsKeyOf(value: string | null, name = 'PAYWATCH_SECRETS_KEY'): Buffer | null {
  if (value === null) return null
  const text = value.trim()
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex')
  if (/^[A-Za-z0-9+/]{43}=$/.test(text)) return Buffer.from(text, 'base64')
  throw new ConfigError(`${name} must be 32 bytes as 64 hex characters or 44 base64 characters (e.g. openssl rand -hex 32)`)
}

/** A PEM private key; `\n` escapes are accepted because a PEM is often put on one line of an env file. */
function signingKeyPem(value: string | null): string | null {
  if (value === null) return null
  const pem = value.includes('\\n') ? value.replace(/\\n/g, '\n') : value
  let key: KeyObject
  try {
    key = createPrivateKey(pem)
  } catch {
    throw new ConfigError('PAYWATCH_SIGNING_KEY must be a PEM-encoded PKCS#8 RSA private key')
  }
  if (key.asymmetricKeyType !== 'rsa') throw new ConfigError('PAYWATCH_SIGNING_KEY must be an RSA private key')
  return pem
}

function readConfigFile(path: string): Source {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new ConfigError(`PAYWATCH_CONFIG: cannot read ${path}: ${(error as Error).message}`)
  }
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object')
    return parsed as Source
  } catch (error) {
    throw new ConfigError(`PAYWATCH_CONFIG: ${path} is not valid JSON: ${(error as Error).message}`)
  }
}

export function trackedChains(config: Config): ChainConfig[] {
  return Object.values(config.chains).filter((chain) => chain.rpc.length > 0)
}
