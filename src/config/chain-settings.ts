import { getAddress, isAddress, type Address } from 'viem'
import { builtInChains, type ChainConfig } from './chains.ts'
import { ConfigError } from './config-error.ts'

type Source = Record<string, unknown>

const chainNamePattern = /^[a-z][a-z0-9_-]{0,39}$/

export function loadChains(env: NodeJS.ProcessEnv, fromFile: unknown): Record<string, ChainConfig> {
  const chains = builtInChains()
  if (fromFile !== undefined) {
    if (typeof fromFile !== 'object' || fromFile === null || Array.isArray(fromFile)) {
      throw new ConfigError('chains (config file) must be an object keyed by chain name')
    }
    for (const [name, raw] of Object.entries(fromFile as Source)) {
      if (!chainNamePattern.test(name)) throw new ConfigError(`chains.${name} (config file): chain names are lower-case words`)
      // Own properties only: `constructor` is on every object but is no built-in chain.
      chains[name] = mergeChain(name, Object.hasOwn(chains, name) ? chains[name] : undefined, raw)
    }
  }
  const envNames = new Set<string>()
  for (const name of Object.keys(chains)) {
    const envName = `PAYWATCH_RPC_${name.toUpperCase().replace(/-/g, '_')}`
    envNames.add(envName)
    const value = env[envName]
    if (value !== undefined && value.trim() !== '') {
      chains[name]!.rpc = value
        .split(',')
        .map((url) => url.trim())
        .filter(Boolean)
        .map((url) => rpcUrl(envName, url))
      chains[name]!.rpcRps = chains[name]!.rpc.map(() => null)
    }
  }
  // A misspelt chain would otherwise be silently untracked.
  const stray = Object.keys(env).find((key) => key.startsWith('PAYWATCH_RPC_') && !envNames.has(key) && env[key]?.trim())
  if (stray) {
    throw new ConfigError(
      `${stray}: no chain named ${stray.slice(13).toLowerCase().replace(/_/g, '-')}; known chains: ` +
        `${Object.keys(chains).join(', ')} (add others in the config file's chains)`,
    )
  }
  return chains
}

function mergeChain(name: string, base: ChainConfig | undefined, raw: unknown): ChainConfig {
  const where = `chains.${name}`
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError(`${where} (config file) must be an object`)
  // Records which fields are read, so that a misspelt field is refused at the end instead of ignored.
  const read = new Set<string>()
  const o = new Proxy(raw as Source, { get: (target, key) => (typeof key === 'string' && read.add(key), target[key as string]) })
  if (!base && typeof o.chainId !== 'number')
    throw new ConfigError(`${where}.chainId (config file) is required for a chain that is not built in`)
  const chain: ChainConfig = base
    ? { ...base }
    : {
        name,
        chainId: 0,
        rpc: [],
        rpcRps: [],
        quorum: 1,
        maxHeadAgeSeconds: null,
        nativeSymbol: 'ETH',
        nativeName: 'Ether',
        nativeDecimals: 18,
        wrapped: null,
        stablecoins: [],
        tokens: [],
        multicall3: null,
        uniswapV2Factories: [],
        uniswapV3Pools: [],
        finalityDepth: null,
        fallbackFinalityDepth: 64,
        pollingIntervalMs: 2000,
        rpcTimeoutMs: 10_000,
      }
  const num = (key: string, min: number, max: number): number | undefined => {
    const v = o[key]
    if (v === undefined) return undefined
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new ConfigError(`${where}.${key} (config file) must be an integer from ${min} to ${max}`)
    }
    return v
  }
  const text = (key: string): string | undefined => {
    const v = o[key]
    if (v === undefined) return undefined
    if (typeof v !== 'string' || v === '') throw new ConfigError(`${where}.${key} (config file) must be a non-empty string`)
    return v
  }
  const address = (key: string, v: unknown): Address => {
    if (typeof v !== 'string' || !isAddress(v, { strict: false }))
      throw new ConfigError(`${where}.${key} (config file) must hold addresses`)
    return getAddress(v)
  }
  const addresses = (key: string): Address[] | undefined => {
    const v = o[key]
    if (v === undefined) return undefined
    if (!Array.isArray(v)) throw new ConfigError(`${where}.${key} (config file) must be an array of addresses`)
    return v.map((a) => address(key, a))
  }
  if (o.rpc !== undefined) {
    const items = rpcItems(`${where}.rpc (config file)`, o.rpc)
    chain.rpc = items.map((item) => item.url)
    chain.rpcRps = items.map((item) => item.rps)
  }
  chain.quorum = num('quorum', 1, 16) ?? chain.quorum
  if (o.maxHeadAgeSeconds !== undefined)
    chain.maxHeadAgeSeconds = o.maxHeadAgeSeconds === null ? null : num('maxHeadAgeSeconds', 1, 86_400)!
  chain.chainId = num('chainId', 1, Number.MAX_SAFE_INTEGER) ?? chain.chainId
  chain.nativeSymbol = text('nativeSymbol') ?? chain.nativeSymbol
  chain.nativeName = text('nativeName') ?? chain.nativeName
  chain.nativeDecimals = num('nativeDecimals', 0, 255) ?? chain.nativeDecimals
  if (o.wrapped !== undefined) chain.wrapped = o.wrapped === null ? null : address('wrapped', o.wrapped)
  if (o.multicall3 !== undefined) chain.multicall3 = o.multicall3 === null ? null : address('multicall3', o.multicall3)
  chain.stablecoins = addresses('stablecoins') ?? chain.stablecoins
  chain.tokens = addresses('tokens') ?? chain.tokens
  chain.uniswapV2Factories = addresses('uniswapV2Factories') ?? chain.uniswapV2Factories
  chain.uniswapV3Pools = addresses('uniswapV3Pools') ?? chain.uniswapV3Pools
  if (o.finalityDepth !== undefined) chain.finalityDepth = o.finalityDepth === null ? null : num('finalityDepth', 0, 100_000)!
  chain.pollingIntervalMs = num('pollingIntervalMs', 10, 600_000) ?? chain.pollingIntervalMs
  chain.rpcTimeoutMs = num('rpcTimeoutMs', 50, 600_000) ?? chain.rpcTimeoutMs
  const unknown = Object.keys(raw).find((key) => !read.has(key))
  if (unknown !== undefined) throw new ConfigError(`${where}.${unknown} (config file) is not a chain setting`)
  return chain
}

/** `rpc` items: a URL, or `{url, rps}` (at most `rps` requests per second to that provider). */
function rpcItems(where: string, raw: unknown): { url: string; rps: number | null }[] {
  if (!Array.isArray(raw)) throw new ConfigError(`${where} must be an array of URLs or {url, rps} objects`)
  return raw.map((item: unknown) => {
    if (typeof item === 'string') return { url: rpcUrl(where, item), rps: null }
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new ConfigError(`${where} must be an array of URLs or {url, rps} objects`)
    const { url, rps, ...rest } = item as Record<string, unknown>
    const stray = Object.keys(rest)[0]
    if (stray !== undefined) throw new ConfigError(`${where}: ${stray} is not an RPC setting (url, rps)`)
    if (typeof url !== 'string') throw new ConfigError(`${where}: each object needs a url`)
    if (rps !== undefined && (typeof rps !== 'number' || !(rps > 0) || rps > 100_000))
      throw new ConfigError(`${where}: rps must be a number above 0`)
    return { url: rpcUrl(where, url), rps: rps === undefined ? null : rps }
  })
}

function rpcUrl(where: string, url: string): string {
  if (!/^(https?|wss?):\/\/[^\s]+$/.test(url)) throw new ConfigError(`${where}: ${JSON.stringify(url)} is not an http(s) or ws(s) URL`)
  return url
}

/** The chains that have RPC URLs and are therefore tracked. */
