/**
 * The live (server-sent events) streams this node has open, by the session that opened them: a
 * sign-out ends its session's streams at once, "sign out all sessions" ends every one. Streams of a
 * session ended on another node (or by a rotated admin token) end at their next look at the session
 * (live.ts re-checks it on every poll).
 */
export interface SessionStreams {
  /** Registers a stream's `end`; returns the function that forgets it again (the stream ended by itself). */
  add(sessionId: string, end: () => void): () => void
  /** Ends the streams of one session. */
  endSession(sessionId: string): void
  /** Ends every stream (all sessions signed out, or the server closing). */
  endAll(): void
}

export function createSessionStreams(): SessionStreams {
  const bySession = new Map<string, Set<() => void>>()
  const endEach = (ends: Iterable<() => void>) => {
    for (const end of [...ends]) end()
  }
  return {
    add(sessionId, end) {
      let ends = bySession.get(sessionId)
      if (!ends) bySession.set(sessionId, (ends = new Set()))
      ends.add(end)
      return () => {
        ends.delete(end)
        if (ends.size === 0 && bySession.get(sessionId) === ends) bySession.delete(sessionId)
      }
    },
    endSession(sessionId) {
      const ends = bySession.get(sessionId)
      if (ends) endEach(ends)
    },
    endAll() {
      for (const ends of [...bySession.values()]) endEach(ends)
    },
  }
}
