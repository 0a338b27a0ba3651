import type { CallFrame } from './transfers.ts'

/** One entry of `trace_transaction` (the "parity" trace format): a flat list, placed by `traceAddress`. */
interface ParityTrace {
  type: string
  traceAddress: number[]
  error?: string
  action: { callType?: string; from?: string; to?: string; value?: string; address?: string; refundAddress?: string; balance?: string }
  result?: { address?: string } | null
}

export function isParityTraceList(value: unknown): value is ParityTrace[] {
  return (
    Array.isArray(value) &&
    value.every(
      (t) => typeof t === 'object' && t !== null && Array.isArray(t.traceAddress) && typeof t.action === 'object' && t.action !== null,
    )
  )
}

/**
 * The call tree of a `trace_transaction` answer, in `debug_traceTransaction` callTracer's shape, so
 * that one reading of internal value serves both: a call keeps its call type (CALL, DELEGATECALL…),
 * a `suicide` becomes SELFDESTRUCT sending its balance to the refund address, a create its value
 * to the new contract. Null when the list has no top-level frame.
 */
export function parityToCallFrame(traces: readonly ParityTrace[]): CallFrame | null {
  const frames = new Map<string, CallFrame>()
  // Parents before children; a stable sort keeps siblings in call order.
  const ordered = [...traces].sort((a, b) => a.traceAddress.length - b.traceAddress.length)
  for (const trace of ordered) {
    const frame = frameOf(trace)
    const path = trace.traceAddress.join(',')
    frames.set(path, frame)
    if (trace.traceAddress.length === 0) continue
    const parent = frames.get(trace.traceAddress.slice(0, -1).join(','))
    // An orphan (its parent missing from the answer) is a malformed trace: no tree at all.
    if (!parent) return null
    ;(parent.calls ??= []).push(frame)
  }
  const root = frames.get('') ?? null
  return root
}

function frameOf(trace: ParityTrace): CallFrame {
  const { action } = trace
  const kind = trace.type.toLowerCase()
  const frame: CallFrame =
    kind === 'suicide' || kind === 'selfdestruct'
      ? { type: 'SELFDESTRUCT', from: action.address, to: action.refundAddress, value: action.balance }
      : kind === 'create'
        ? { type: 'CREATE', from: action.from, to: trace.result?.address, value: action.value }
        : { type: (action.callType ?? kind).toUpperCase(), from: action.from, to: action.to, value: action.value }
  if (trace.error) frame.error = trace.error
  return frame
}
