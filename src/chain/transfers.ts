import { NATIVE_TOKEN, type Transfer } from '../domain/judge.ts'

/** topic0 of `Transfer(address,address,uint256)` (ERC-20 and ERC-721 share it). */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'

export interface LogLike {
  address: string
  topics: readonly string[]
  data: string
  removed?: boolean
}

/** One frame of `debug_traceTransaction` with `{tracer: 'callTracer'}`. */
export interface CallFrame {
  type: string
  from?: string
  to?: string
  value?: string
  error?: string
  calls?: CallFrame[]
}

const topicAddress = (topic: string): string => `0x${topic.slice(-40)}`.toLowerCase()

/**
 * ERC-20 `Transfer` logs: token = the emitting contract, to = topic 2, from anything (a router's
 * forward counts). ERC-721 transfers carry the token id as a 4th topic and are left out, as are
 * logs with a malformed value.
 */
export function erc20Transfers(logs: readonly LogLike[]): Transfer[] {
  const transfers: Transfer[] = []
  for (const log of logs) {
    if (log.removed || log.topics.length !== 3 || log.topics[0]?.toLowerCase() !== TRANSFER_TOPIC) continue
    if (!/^0x[0-9a-fA-F]{64}$/.test(log.data)) continue
    transfers.push({ token: log.address.toLowerCase(), to: topicAddress(log.topics[2]!), amount: BigInt(log.data) })
  }
  return transfers
}

/** The transaction's own value to its `to` (nothing when it reverted, or for a contract creation). */
export function ownValueTransfer(tx: { to: string | null; value: bigint }, reverted: boolean): Transfer[] {
  if (reverted || tx.to === null || tx.value <= 0n) return []
  return [{ token: NATIVE_TOKEN, to: tx.to.toLowerCase(), amount: tx.value }]
}

/**
 * Native value moved by internal calls: every CALL (and SELFDESTRUCT, which sends the balance to
 * its beneficiary) below the top-level frame carrying value. The top-level frame is the
 * transaction itself, counted by `ownValueTransfer`. A frame that errored was rolled back with
 * everything beneath it, so its subtree moves nothing.
 */
export function internalValueTransfers(root: CallFrame): Transfer[] {
  const transfers: Transfer[] = []
  // depth-first, in call order (a stack of reversed children)
  const stack = root.error ? [] : [...(root.calls ?? [])].reverse()
  while (stack.length > 0) {
    const frame = stack.pop()!
    if (frame.error) continue
    const value = parseValue(frame.value)
    const type = frame.type.toUpperCase()
    if ((type === 'CALL' || type === 'SELFDESTRUCT') && value > 0n && frame.to) {
      transfers.push({ token: NATIVE_TOKEN, to: frame.to.toLowerCase(), amount: value })
    }
    if (frame.calls) stack.push(...[...frame.calls].reverse())
  }
  return transfers
}

function parseValue(value: string | undefined): bigint {
  if (!value) return 0n
  try {
    return BigInt(value)
  } catch {
    return 0n
  }
}
