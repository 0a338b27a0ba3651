import { decodeAbiParameters, encodeFunctionData, erc20Abi, hexToString, size, type Address } from 'viem'
import type { BatchCall, BatchResult } from './batch-reader.ts'

/** ERC-20 reads as batch calls, and tolerant decoders for what tokens really answer. */

export const balanceOfCall = (token: Address, account: Address): BatchCall => ({
  to: token,
  data: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [account] }),
})

export const nameCall = (token: Address): BatchCall => ({ to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'name' }) })
export const symbolCall = (token: Address): BatchCall => ({
  to: token,
  data: encodeFunctionData({ abi: erc20Abi, functionName: 'symbol' }),
})
export const decimalsCall = (token: Address): BatchCall => ({
  to: token,
  data: encodeFunctionData({ abi: erc20Abi, functionName: 'decimals' }),
})

/** A uint256 answer; undefined for a failed call or one that returned too little data (no contract). */
export function decodeUint(result: BatchResult | undefined): bigint | undefined {
  if (!result?.ok || size(result.data) < 32) return undefined
  return decodeAbiParameters([{ type: 'uint256' }], result.data)[0]
}

/** Decimals as a number; some tokens declare uint256, so anything up to 255 is accepted. */
export function decodeDecimals(result: BatchResult | undefined): number | undefined {
  const value = decodeUint(result)
  return value !== undefined && value <= 255n ? Number(value) : undefined
}

/** A `string` answer, or a `bytes32` one (early tokens such as MKR), without trailing NULs. */
export function decodeText(result: BatchResult | undefined): string | undefined {
  if (!result?.ok) return undefined
  try {
    return decodeAbiParameters([{ type: 'string' }], result.data)[0]
  } catch {
    if (size(result.data) !== 32) return undefined
    // eslint-disable-next-line no-control-regex
    return hexToString(result.data).replace(/\u0000+$/, '')
  }
}
