import type { Log } from 'viem'
import { carryAnswerSource } from './answer-source.ts'
import type { FetchedReceipt } from './payment-evidence.ts'

/**
 * What a block's logs tell of its receipts (docs/architecture.md, "A block's logs for its receipts"):
 * for each transaction that emitted a log, its logs and the status `success`. A reverted transaction's
 * logs are discarded with the rest of its effects, so a transaction with a log in the block did not
 * revert. Its gas is not told: having run code to log, it used more than the 21,000 of a plain value
 * transfer, which is all the evidence asks of it. A transaction without a log is absent: its receipt
 * must be read. Undefined when a log is of another block than `blockHash`, or names no transaction:
 * such an answer tells nothing sure of this block.
 */
export function receiptsFromLogs(blockHash: string, logs: readonly Log[]): Map<string, FetchedReceipt> | undefined {
  const wanted = blockHash.toLowerCase()
  const receipts = new Map<string, FetchedReceipt & { logs: Log[] }>()
  for (const log of logs) {
    if (log.removed) continue
    if (log.blockHash?.toLowerCase() !== wanted || log.transactionHash === null || log.blockNumber === null) return undefined
    const hash = log.transactionHash.toLowerCase()
    let receipt = receipts.get(hash)
    if (!receipt) {
      receipt = carryAnswerSource(log, {
        transactionHash: hash,
        status: 'success' as const,
        blockNumber: log.blockNumber,
        blockHash: wanted,
        logs: [],
      })
      receipts.set(hash, receipt)
    }
    receipt.logs.push(log)
  }
  return receipts
}
