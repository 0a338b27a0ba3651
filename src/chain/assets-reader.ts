import { getAddress, type Address } from 'viem'
import type { Logger } from 'pino'
import { NATIVE_TOKEN, type ChainConfig } from '../config/chains.ts'
import { batchReaderFor, type BatchCall, type BatchResult } from './batch-reader.ts'
import { balanceOfCall, decimalsCall, decodeDecimals, decodeText, decodeUint, nameCall, symbolCall } from './erc20-calls.ts'
import type { ChainHandle } from './registry.ts'

/** One holding of an account (docs/api.md, records and endpoints). */
export interface Asset {
  name: string
  symbol: string
  address: Address
  balance: string
  decimals: number
  type: 'NATIVE' | '20'
}

interface TokenMetadata {
  name: string
  symbol: string
  decimals: number
}

export interface AssetsReader {
  /**
   * The native balance and every listed token the account holds (zero balances left out), read in
   * one RPC round trip. Throws ChainUnavailableError when the RPC cannot be reached.
   */
  assetsOf(chain: ChainHandle, account: Address): Promise<Asset[]>
}

/** The chain's token list: wrapped native, USD stablecoins, then configured tokens, each once. */
export function listedTokens(config: ChainConfig): Address[] {
  const seen = new Set<string>([NATIVE_TOKEN.toLowerCase()])
  const tokens: Address[] = []
  for (const token of [config.wrapped, ...config.stablecoins, ...config.tokens]) {
    if (!token || seen.has(token.toLowerCase())) continue
    seen.add(token.toLowerCase())
    tokens.push(getAddress(token))
  }
  return tokens
}

export function createAssetsReader(logger: Logger): AssetsReader {
  // Per chain: token metadata never changes, so it is read once and kept (only successful reads).
  const metadataByChain = new WeakMap<ChainHandle, Map<Address, TokenMetadata>>()
  // A token that keeps failing is logged at warn once, then at debug, so that a bad list entry does not flood the log.
  const reported = new Set<string>()

  const reportFailure = (chain: string, token: Address, what: string, reason: string) => {
    const key = `${chain}:${token}:${what}`
    const level = reported.has(key) ? 'debug' : 'warn'
    reported.add(key)
    logger[level]({ chain, token, reason }, `token ${what} could not be read; left out of the assets`)
  }

  return {
    async assetsOf(chain, account) {
      let metadata = metadataByChain.get(chain)
      if (!metadata) metadataByChain.set(chain, (metadata = new Map()))
      const tokens = listedTokens(chain.config)
      const unknown = tokens.filter((token) => !metadata.has(token))

      // Balances first, then metadata of tokens never seen: all in the same round trip.
      const calls: BatchCall[] = [
        { nativeBalanceOf: account },
        ...tokens.map((token) => balanceOfCall(token, account)),
        ...unknown.flatMap((token) => [nameCall(token), symbolCall(token), decimalsCall(token)]),
      ]
      const results = await batchReaderFor(chain, logger).read(calls)
      const at = (index: number): BatchResult | undefined => results[index]

      unknown.forEach((token, i) => {
        const base = 1 + tokens.length + 3 * i
        const name = decodeText(at(base))
        const symbol = decodeText(at(base + 1))
        const decimals = decodeDecimals(at(base + 2))
        if (name !== undefined && symbol !== undefined && decimals !== undefined) metadata.set(token, { name, symbol, decimals })
      })

      const assets: Asset[] = []
      const native = decodeUint(at(0))
      if (native === undefined) {
        reportFailure(chain.config.name, NATIVE_TOKEN, 'native balance', failureOf(at(0)))
      } else if (native > 0n) {
        const { nativeName: name, nativeSymbol: symbol, nativeDecimals: decimals } = chain.config
        assets.push({ name, symbol, address: NATIVE_TOKEN, balance: native.toString(), decimals, type: 'NATIVE' })
      }
      tokens.forEach((token, i) => {
        const result = at(1 + i)
        const balance = decodeUint(result)
        if (balance === undefined) return reportFailure(chain.config.name, token, 'balance', failureOf(result))
        if (balance === 0n) return
        const meta = metadata.get(token)
        if (!meta) return reportFailure(chain.config.name, token, 'metadata (name, symbol, decimals)', 'a call failed or answered garbage')
        assets.push({ ...meta, address: token, balance: balance.toString(), type: '20' })
      })
      return assets
    },
  }
}

function failureOf(result: BatchResult | undefined): string {
  if (!result) return 'no answer'
  return result.ok ? 'not a uint256 answer (no contract at the address?)' : result.reason
}
