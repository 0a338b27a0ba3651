import {
  formatBlock,
  formatLog,
  formatTransaction,
  formatTransactionReceipt,
  numberToHex,
  pad,
  type Address,
  type Hex,
  type Hash,
  type Log,
  type PublicClient,
  type Transaction,
  type TransactionReceipt,
} from 'viem'
import type { BlockHeader } from '../domain/block-window.ts'
import { carryAnswerSource } from './answer-source.ts'
import { isMethodUnavailable, NonRetryableChainError } from './errors.ts'
import { TRANSFER_TOPIC } from './transfers.ts'

export interface FullBlock extends BlockHeader {
  transactions: Transaction[]
  /**
   * The block's logs bloom is empty: none of its transactions logged. An empty answer for a block's logs
   * is believed only then (receiver-match.ts); unknown (a block built elsewhere) counts as not empty.
   */
  logsBloomEmpty?: boolean
}

/** A logs bloom of zeros only: no log in the block (2,048 bits, each set by some log's address or topic). */
const isEmptyBloom = (bloom: string | null | undefined): boolean => typeof bloom === 'string' && /^0x0*$/.test(bloom)

export type BlockRef = bigint | 'latest' | 'finalized'

/**
 * The reads the chain engine makes, as raw JSON-RPC calls formatted by viem. "Not found" is
 * `null`, never an error: only a failing RPC throws, so a failure can never be mistaken for an
 * answer about a payment.
 */
export interface ChainReader {
  chainId(): Promise<number>
  header(ref: BlockRef): Promise<BlockHeader | null>
  headerByHash(hash: Hash): Promise<BlockHeader | null>
  /** A block with its full transactions. */
  block(ref: BlockRef): Promise<FullBlock | null>
  /** The receipts of a block (only those of `only`, when given: the others are not even formatted). */
  blockReceipts(hash: Hash, only?: Set<string>): Promise<TransactionReceipt[] | null>
  /** Every log of a block, by the block's hash (one `eth_getLogs`). */
  blockLogs(hash: Hash): Promise<Log[]>
  /**
   * The numbers of the blocks from `from` to `to` holding a `Transfer` of `token` to `receiver`, oldest
   * first: one `eth_getLogs` per `TRANSFER_RANGE_BLOCKS` (providers bound a request's range).
   */
  transferBlocks(token: Address, receiver: Address, from: bigint, to: bigint): Promise<bigint[]>
  /**
   * The numbers of the blocks from `from` to `to` in which a call (top-level or internal) moved native
   * value to `receiver`, oldest first: one `trace_filter` per `TRANSFER_RANGE_BLOCKS`. Null where the RPC
   * does not offer `trace_filter` (most providers do not: Erigon, Nethermind, Reth and Anvil do).
   */
  nativeValueBlocks(receiver: Address, from: bigint, to: bigint): Promise<bigint[] | null>
  receipt(hash: Hash): Promise<TransactionReceipt | null>
  transaction(hash: Hash): Promise<Transaction | null>
  transactionCount(address: Address, ref: BlockRef): Promise<bigint>
}

/** Blocks one `eth_getLogs` of `transferBlocks` (or `trace_filter`) spans: within what providers accept for a filtered range. */
export const TRANSFER_RANGE_BLOCKS = 2_000n

/** The ranges of at most `TRANSFER_RANGE_BLOCKS` that cover `from` to `to`. */
function* rangesOf(from: bigint, to: bigint): Generator<[bigint, bigint]> {
  for (let low = from; low <= to; low += TRANSFER_RANGE_BLOCKS) {
    yield [low, low + TRANSFER_RANGE_BLOCKS - 1n < to ? low + TRANSFER_RANGE_BLOCKS - 1n : to]
  }
}

const sortedNumbers = (numbers: Set<bigint>): bigint[] => [...numbers].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))

/** A `trace_filter` entry's block, when it may have moved value (a call's `value`, a self-destruct's `balance`). */
function valueBlockOf(trace: unknown): bigint | undefined {
  if (typeof trace !== 'object' || trace === null)
    throw new NonRetryableChainError('the RPC answered trace_filter with an entry that is no object')
  const { blockNumber, action } = trace as { blockNumber?: unknown; action?: { value?: unknown; balance?: unknown } }
  const number = typeof blockNumber === 'number' && Number.isSafeInteger(blockNumber) ? BigInt(blockNumber) : hexNumber(blockNumber)
  if (number === undefined) throw new NonRetryableChainError('the RPC answered trace_filter with an entry without a block number')
  const moved = action?.value ?? action?.balance
  // Unreadable value: the block is read (a block too many costs a read; one too few, a payment).
  return typeof moved === 'string' && /^0x0*$/.test(moved) ? undefined : number
}

const hexNumber = (value: unknown): bigint | undefined =>
  typeof value === 'string' && /^0x[0-9a-f]{1,16}$/i.test(value) ? BigInt(value) : undefined

const tag = (ref: BlockRef): string => (typeof ref === 'bigint' ? numberToHex(ref) : ref)

type RawBlock = Parameters<typeof formatBlock>[0]

/** A block without its number, hashes or timestamp (or transactions, when asked for) is not a block. */
function checkShape(raw: RawBlock, full: boolean): void {
  const fields = raw as Record<string, unknown>
  const ok =
    ['number', 'hash', 'parentHash', 'timestamp'].every((name) => typeof fields[name] === 'string') &&
    (!full || Array.isArray(fields.transactions))
  if (!ok) throw new NonRetryableChainError('the RPC answered a malformed block (no number, hash, parentHash, timestamp or transactions)')
}

function toHeader(raw: RawBlock): BlockHeader {
  checkShape(raw, false)
  const block = formatBlock(raw)
  return { number: block.number!, hash: block.hash!, parentHash: block.parentHash, timestamp: block.timestamp }
}

function toFullBlock(raw: RawBlock): FullBlock {
  checkShape(raw, true)
  const block = formatBlock(raw)
  return {
    number: block.number!,
    hash: block.hash!,
    parentHash: block.parentHash,
    timestamp: block.timestamp,
    // Each transaction carries the provider that sent the block (a transaction whose fields do not
    // hash to its hash is that provider's lie: evidence-quorum.ts).
    transactions: (block.transactions as Transaction[]).map((tx) => carryAnswerSource(raw, tx)),
    logsBloomEmpty: isEmptyBloom(block.logsBloom),
  }
}

export function createChainReader(client: PublicClient): ChainReader {
  const request = <T>(method: string, params: unknown[]): Promise<T> => client.request({ method, params } as never) as Promise<T>
  return {
    async chainId() {
      return Number(await request<string>('eth_chainId', []))
    },
    async header(ref) {
      const raw = await request<RawBlock | null>('eth_getBlockByNumber', [tag(ref), false])
      return raw ? toHeader(raw) : null
    },
    async headerByHash(hash) {
      const raw = await request<RawBlock | null>('eth_getBlockByHash', [hash, false])
      return raw ? toHeader(raw) : null
    },
    async block(ref) {
      const raw = await request<RawBlock | null>('eth_getBlockByNumber', [tag(ref), true])
      return raw ? toFullBlock(raw) : null
    },
    async blockReceipts(hash, only) {
      const raw = await request<Parameters<typeof formatTransactionReceipt>[0][] | null>('eth_getBlockReceipts', [hash])
      if (!raw) return null
      const wanted = only ? raw.filter((receipt) => only.has(String(receipt.transactionHash).toLowerCase())) : raw
      // Each receipt carries the provider that sent the block's receipts (the quorum's vote is that answer).
      return wanted.map((receipt) => carryAnswerSource(raw, formatTransactionReceipt(receipt)))
    },
    async blockLogs(hash) {
      const raw = await request<Parameters<typeof formatLog>[0][] | null>('eth_getLogs', [{ blockHash: hash }])
      if (!Array.isArray(raw)) throw new NonRetryableChainError('the RPC answered eth_getLogs with something else than a list')
      // Each log carries the provider that sent the block's logs (the quorum's vote is that answer).
      return raw.map((log) => carryAnswerSource(raw, formatLog(log)))
    },
    async transferBlocks(token, receiver, from, to) {
      const numbers = new Set<bigint>()
      const topics = [TRANSFER_TOPIC, null, pad(receiver.toLowerCase() as Hex)]
      for (const [low, high] of rangesOf(from, to)) {
        const raw = await request<{ blockNumber?: unknown; removed?: unknown }[] | null>('eth_getLogs', [
          { address: token, topics, fromBlock: numberToHex(low), toBlock: numberToHex(high) },
        ])
        if (!Array.isArray(raw)) throw new NonRetryableChainError('the RPC answered eth_getLogs with something else than a list')
        for (const log of raw) if (typeof log.blockNumber === 'string' && log.removed !== true) numbers.add(BigInt(log.blockNumber))
      }
      return sortedNumbers(numbers)
    },
    async nativeValueBlocks(receiver, from, to) {
      const numbers = new Set<bigint>()
      for (const [low, high] of rangesOf(from, to)) {
        let raw: unknown
        try {
          raw = await request('trace_filter', [
            { fromBlock: numberToHex(low), toBlock: numberToHex(high), toAddress: [receiver.toLowerCase()] },
          ])
        } catch (error) {
          if (isMethodUnavailable(error)) return null
          throw error
        }
        if (!Array.isArray(raw)) throw new NonRetryableChainError('the RPC answered trace_filter with something else than a list')
        for (const trace of raw) {
          const number = valueBlockOf(trace)
          if (number !== undefined) numbers.add(number)
        }
      }
      return sortedNumbers(numbers)
    },
    async receipt(hash) {
      const raw = await request<Parameters<typeof formatTransactionReceipt>[0] | null>('eth_getTransactionReceipt', [hash])
      return raw ? carryAnswerSource(raw, formatTransactionReceipt(raw)) : null
    },
    async transaction(hash) {
      const raw = await request<Parameters<typeof formatTransaction>[0] | null>('eth_getTransactionByHash', [hash])
      return raw ? carryAnswerSource(raw, formatTransaction(raw)) : null
    },
    async transactionCount(address, ref) {
      return BigInt(await request<string>('eth_getTransactionCount', [address, tag(ref)]))
    },
  }
}
