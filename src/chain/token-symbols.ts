import { erc20Abi, type Address } from 'viem'
import type { ChainRegistry } from './registry.ts'

const NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'
/** Symbols kept, at most: a dashboard shows a handful of tokens, never thousands. */
const KEPT = 1_000

/**
 * The symbol of a token as an operator reads amounts (the dashboard's "2.5 USDC"): the chain's native
 * symbol for the native address, else the token's own `symbol()`, read once and kept. Null when the chain
 * is not tracked or the call fails (then asked again next time).
 */
export function createTokenSymbols(chains: Pick<ChainRegistry, 'get'>): (blockchain: string, token: string) => Promise<string | null> {
  const kept = new Map<string, Promise<string | null>>()
  return (blockchain, token) => {
    const chain = chains.get(blockchain)
    if (!chain) return Promise.resolve(null)
    if (token.toLowerCase() === NATIVE) return Promise.resolve(chain.config.nativeSymbol)
    const key = `${blockchain}:${token.toLowerCase()}`
    let symbol = kept.get(key)
    if (!symbol) {
      symbol = chain.client
        .readContract({ address: token as Address, abi: erc20Abi, functionName: 'symbol' })
        .then((text) => (typeof text === 'string' && text.length > 0 && text.length <= 32 ? text : null))
        .catch(() => null)
      void symbol.then((text) => text === null && kept.delete(key))
      if (kept.size >= KEPT) kept.delete(kept.keys().next().value!)
      kept.set(key, symbol)
    }
    return symbol
  }
}
