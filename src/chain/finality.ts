import type { Logger } from 'pino'
import type { ChainConfig } from '../config/chains.ts'
import type { ChainReader } from './chain-reader.ts'
import { isTransient } from './errors.ts'

export interface Finality {
  /**
   * The finalized block number when the head is `head`: `finalityDepth` below it when configured,
   * else the RPC's `finalized` tag, else (the RPC does not know the tag) `fallbackFinalityDepth`
   * below it. Undefined when the RPC failed this time: keep the previous value.
   */
  at(head: bigint): Promise<bigint | undefined>
  /** Whether `at` asks the RPC (its `finalized` tag); false when finality is a depth below the head. */
  asksRpc(): boolean
}

export function createFinality(chain: ChainConfig, reader: ChainReader, logger?: Logger): Finality {
  let tag: 'unknown' | 'supported' | 'unsupported' = 'unknown'
  const below = (head: bigint, depth: number) => (head > BigInt(depth) ? head - BigInt(depth) : 0n)
  return {
    asksRpc: () => chain.finalityDepth === null && tag !== 'unsupported',
    async at(head) {
      if (chain.finalityDepth !== null) return below(head, chain.finalityDepth)
      if (tag !== 'unsupported') {
        try {
          const tagged = await reader.header('finalized')
          if (tagged) {
            tag = 'supported'
            return tagged.number
          }
          if (tag === 'supported') return undefined
          tag = 'unsupported'
        } catch (error) {
          // Once the tag worked, a failure is one RPC's trouble, not a missing feature.
          if (isTransient(error) || tag === 'supported') return undefined
          tag = 'unsupported'
          logger?.info({ chain: chain.name, err: error }, 'the RPC does not know the finalized tag: using fallbackFinalityDepth')
        }
      }
      return below(head, chain.fallbackFinalityDepth)
    },
  }
}
