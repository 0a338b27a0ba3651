import { formatTransaction, type Transaction } from 'viem'
import { carryAnswerSource, noteAnswerSource } from './answer-source.ts'
import type { BlockWithHashes, FullBlock } from './chain-reader.ts'

type RawTransaction = Parameters<typeof formatTransaction>[0]

const isHash = (value: unknown): value is string => typeof value === 'string' && /^0x[0-9a-fA-F]{64}$/.test(value)

/**
 * A transaction a `newPendingTransactions` subscription sent whole, formatted as a block's transaction
 * is, and carrying provider `provider` as its source; undefined for anything that does not read as one
 * (a provider that sends hashes only, a malformed object).
 */
export function pendingTransactionOf(raw: unknown, provider: number): Transaction | undefined {
  if (raw === null || typeof raw !== 'object') return undefined
  const fields = raw as Record<string, unknown>
  if (!isHash(fields.hash) || typeof fields.from !== 'string' || typeof fields.nonce !== 'string') return undefined
  try {
    const tx = formatTransaction(raw as RawTransaction)
    noteAnswerSource(tx, provider)
    return tx
  } catch {
    return undefined
  }
}

/**
 * The block `block` with its transactions taken from `pending` (those seen before they were mined), or
 * undefined when any of them was not seen. A transaction's hash commits to every field it was signed
 * with, so the pending one is the mined one but for where it landed (block, time, index) and, priced by
 * EIP-1559, the `gasPrice` it paid, which the block's base fee tells.
 */
export function fullBlockFrom(block: BlockWithHashes, pending: (hash: string) => Transaction | undefined): FullBlock | undefined {
  const transactions: Transaction[] = []
  for (const [index, hash] of block.transactionHashes.entries()) {
    const seen = pending(hash)
    if (!seen || seen.hash.toLowerCase() !== hash.toLowerCase()) return undefined
    transactions.push(minedAs(seen, block, index))
  }
  const { transactionHashes: _, baseFeePerGas: __, ...header } = block
  return { ...header, transactions }
}

function minedAs(pending: Transaction, block: BlockWithHashes, index: number): Transaction {
  const mined = {
    ...pending,
    blockHash: block.hash,
    blockNumber: block.number,
    // Newer nodes tell a mined transaction's block time too (Anvil does); nothing here reads it.
    blockTimestamp: block.timestamp,
    transactionIndex: index,
    gasPrice: paidGasPrice(pending, block.baseFeePerGas),
  } as Transaction
  return carryAnswerSource(pending, mined)
}

/** What a mined transaction's `gasPrice` says: a fee-capped one paid the base fee plus its tip, within its cap. */
function paidGasPrice(tx: Transaction, baseFee: bigint | null): bigint | undefined {
  if (tx.maxFeePerGas === undefined || tx.maxPriorityFeePerGas === undefined || baseFee === null) return tx.gasPrice
  const offered = baseFee + tx.maxPriorityFeePerGas
  return offered < tx.maxFeePerGas ? offered : tx.maxFeePerGas
}
