import type { TrackingEvents } from '../common/tracking-events.ts'

export interface Progress {
  required: number
  passed: number
}

/**
 * The last confirmation count the engine published for each pending tracking on this node, so a
 * payment page shows it at once (the SSE stream then carries the next ones). Forgotten when the
 * tracking completes; bounded by the pending trackings this node follows.
 */
export function rememberProgress(events: TrackingEvents) {
  const last = new Map<string, Progress>()
  const onProgress = ({ tracking, required, passed }: { tracking: { id: string }; required: number; passed: number }) =>
    void last.set(tracking.id, { required, passed })
  const onCompleted = (tracking: { id: string }) => void last.delete(tracking.id)
  events.on('progress', onProgress)
  events.on('completed', onCompleted)
  return {
    of: (trackingId: string): Progress | undefined => last.get(trackingId),
    close() {
      events.off('progress', onProgress)
      events.off('completed', onCompleted)
    },
  }
}

export type ProgressMemory = ReturnType<typeof rememberProgress>
