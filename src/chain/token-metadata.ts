import {
  erc20Abi,
  type Address,
  type PublicClient,
  ContractFunctionExecutionError,
  ContractFunctionZeroDataError,
  ContractFunctionRevertedError,
} from 'viem'
import { NATIVE_TOKEN, type ChainConfig } from '../config/chains.ts'
import { ChainUnavailableError, TokenNotFoundError } from './errors.ts'

export const isNativeToken = (address: string): boolean => address.toLowerCase() === NATIVE_TOKEN.toLowerCase()

/**
 * Reads token decimals from the contract once per chain and token; a token's decimals never change.
 * Concurrent first reads of one token share one RPC call.
 */
export function createDecimalsReader(chain: ChainConfig, client: PublicClient) {
  const cache = new Map<string, Promise<number>>()
  return async function decimalsOf(token: string): Promise<number> {
    if (isNativeToken(token)) return chain.nativeDecimals
    const key = token.toLowerCase()
    let pending = cache.get(key)
    if (!pending) {
      pending = readDecimals(client, key as Address)
      cache.set(key, pending)
      // Only answers are cached; a failed read is tried again next time.
      pending.catch(() => cache.delete(key))
    }
    return pending
  }
}

async function readDecimals(client: PublicClient, token: Address): Promise<number> {
  try {
    const decimals = await client.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' })
    return Number(decimals)
  } catch (error) {
    if (isContractAnswer(error)) {
      throw new TokenNotFoundError(`${token} is not an ERC-20 token on this chain (decimals() failed)`, { cause: error })
    }
    throw new ChainUnavailableError('the chain RPC did not answer', { cause: error })
  }
}

/** True when the node answered and the call itself failed (no code, revert, undecodable data). */
function isContractAnswer(error: unknown): boolean {
  if (!(error instanceof ContractFunctionExecutionError)) return false
  const cause = error.cause
  return (
    cause instanceof ContractFunctionZeroDataError ||
    cause instanceof ContractFunctionRevertedError ||
    /revert|returned no data|out of gas|invalid opcode|decode/i.test(error.shortMessage + ' ' + (cause?.message ?? ''))
  )
}
