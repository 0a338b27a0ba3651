import { getAddress, isAddress, type Address } from 'viem'
import { ChainUnavailableError } from '../../chain/errors.ts'
import type { ChainHandle, ChainRegistry } from '../../chain/registry.ts'
import { chainUnavailable, unsupportedBlockchain, validationFailed } from '../problem.ts'

/** Path parameters shared by the assets and prices routes, read into problems a client can act on. */

export function trackedChain(chains: ChainRegistry, blockchain: string): ChainHandle {
  const chain = chains.get(blockchain)
  if (!chain) throw unsupportedBlockchain(blockchain)
  return chain
}

export function addressParam(value: string, path: string): Address {
  if (!isAddress(value, { strict: false })) throw validationFailed([{ path, message: 'must be a 0x-prefixed 20-byte hex address' }])
  return getAddress(value.toLowerCase())
}

/** Runs a chain read; an unreachable RPC is a 503 the client may retry, never a 500. */
export async function readingChain<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (error) {
    if (error instanceof ChainUnavailableError) throw chainUnavailable()
    throw error
  }
}

export const chainDataParams = (second: string) =>
  ({
    type: 'object',
    properties: { blockchain: { type: 'string', description: 'e.g. ethereum, bsc' }, [second]: { type: 'string' } },
    required: ['blockchain', second],
  }) as const
