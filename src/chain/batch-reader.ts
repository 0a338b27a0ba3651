import {
  BaseError,
  ExecutionRevertedError,
  RawContractError,
  decodeFunctionResult,
  encodeFunctionData,
  hexToBigInt,
  isHex,
  numberToHex,
  parseAbi,
  type Address,
  type Hex,
} from 'viem'
import type { Logger } from 'pino'
import { ChainUnavailableError } from './errors.ts'
import type { ChainHandle } from './registry.ts'
import { isExecutionFailure, isUnreachable, sendRpcBatch, type RpcAnswer } from './rpc-batch.ts'

/** A read in a batch: a contract call, or the native balance of an account. */
export type BatchCall = { to: Address; data: Hex } | { nativeBalanceOf: Address }

/** Raw return data of one call (a native balance comes back ABI-encoded as uint256), or why it failed. */
export type BatchResult = { ok: true; data: Hex } | { ok: false; reason: string }

export interface BatchReader {
  /**
   * Every call in ONE RPC round trip: Multicall3 `aggregate3` (each call allowed to fail) where the
   * chain has it, else one JSON-RPC batch. A failing call fails alone; the RPC being unreachable
   * throws ChainUnavailableError.
   */
  read(calls: BatchCall[]): Promise<BatchResult[]>
  /** How the next read will travel. */
  mode(): 'multicall3' | 'json-rpc-batch'
}

const multicall3Abi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
  'function getEthBalance(address addr) view returns (uint256 balance)',
])

const readers = new WeakMap<ChainHandle, BatchReader>()

/** The batch reader of a chain (one per chain handle, so that what it learns about the chain is shared). */
export function batchReaderFor(chain: ChainHandle, logger: Logger): BatchReader {
  let reader = readers.get(chain)
  if (!reader) {
    reader = createBatchReader(chain, logger.child({ chain: chain.config.name }))
    readers.set(chain, reader)
  }
  return reader
}

function createBatchReader(chain: ChainHandle, logger: Logger): BatchReader {
  // Cleared when the configured address turns out to hold no contract (e.g. a fresh development node).
  let multicall3 = chain.config.multicall3

  async function viaMulticall(address: Address, calls: BatchCall[]): Promise<BatchResult[] | undefined> {
    const data = encodeFunctionData({
      abi: multicall3Abi,
      functionName: 'aggregate3',
      args: [
        calls.map((call) =>
          'nativeBalanceOf' in call
            ? {
                target: address,
                allowFailure: true,
                callData: encodeFunctionData({ abi: multicall3Abi, functionName: 'getEthBalance', args: [call.nativeBalanceOf] }),
              }
            : { target: call.to, allowFailure: true, callData: call.data },
        ),
      ],
    })
    let answer: Hex | undefined
    try {
      answer = (await chain.client.call({ to: address, data })).data
    } catch (error) {
      if (isUnreachable(error)) throw new ChainUnavailableError('the chain RPC did not answer', { cause: error })
      if (!isRevert(error)) throw new ChainUnavailableError('the chain RPC refused the call', { cause: error })
      // aggregate3 itself failed (out of gas on a huge batch, a different contract at the address): this
      // time only, the calls travel as a JSON-RPC batch instead.
      logger.warn({ err: error, multicall3: address }, 'Multicall3 aggregate3 failed; using a JSON-RPC batch')
      return undefined
    }
    if (answer === undefined || answer === '0x') {
      logger.warn({ multicall3: address }, 'no Multicall3 contract at the configured address; using JSON-RPC batches from now on')
      multicall3 = null
      return undefined
    }
    let results: readonly { success: boolean; returnData: Hex }[]
    try {
      results = decodeFunctionResult({ abi: multicall3Abi, functionName: 'aggregate3', data: answer })
    } catch (error) {
      logger.warn({ err: error, multicall3: address }, 'the Multicall3 address answered something else; using a JSON-RPC batch')
      return undefined
    }
    return results.map((result) =>
      result.success ? { ok: true, data: result.returnData } : { ok: false, reason: revertReason(result.returnData) },
    )
  }

  async function viaJsonRpcBatch(calls: BatchCall[]): Promise<BatchResult[]> {
    const answers = await sendRpcBatch(
      chain.config.rpc,
      chain.client,
      calls.map((call) =>
        'nativeBalanceOf' in call
          ? { method: 'eth_getBalance', params: [call.nativeBalanceOf, 'latest'] }
          : { method: 'eth_call', params: [{ to: call.to, data: call.data }, 'latest'] },
      ),
    )
    return answers.map((answer, index) => toResult(answer, 'nativeBalanceOf' in calls[index]!))
  }

  return {
    mode: () => (multicall3 ? 'multicall3' : 'json-rpc-batch'),
    async read(calls) {
      if (calls.length === 0) return []
      if (multicall3) {
        const results = await viaMulticall(multicall3, calls)
        if (results) return results
      }
      return viaJsonRpcBatch(calls)
    },
  }
}

function toResult(answer: RpcAnswer, isBalance: boolean): BatchResult {
  if ('error' in answer) return { ok: false, reason: answer.error.message }
  if (typeof answer.result !== 'string' || !isHex(answer.result)) return { ok: false, reason: 'the RPC answered a non-hex result' }
  // eth_getBalance answers a quantity; callers decode every result as ABI data, so it is encoded as uint256.
  return { ok: true, data: isBalance ? numberToHex(hexToBigInt(answer.result), { size: 32 }) : answer.result }
}

function isRevert(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false
  if (error.walk((e) => e instanceof ExecutionRevertedError || e instanceof RawContractError)) return true
  const details = error.walk((e) => e instanceof BaseError && typeof e.details === 'string' && e.details !== '') as BaseError | null
  return isExecutionFailure({ message: `${details?.details ?? ''} ${error.shortMessage}` })
}

function revertReason(data: Hex): string {
  return data === '0x' ? 'reverted without a reason' : `reverted (${data.slice(0, 10)}…)`
}
