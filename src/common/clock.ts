/** Wall clock, injectable so that time-dependent behaviour is tested without sleeping. */
export type Clock = () => Date
export const systemClock: Clock = () => new Date()

/**
 * Milliseconds from an arbitrary start that never jump (performance.now()): for durations a node measures
 * itself (a lease's validity, a token bucket), which must not move when the wall clock is set. Injectable too.
 */
export type MonotonicClock = () => number
export const monotonicClock: MonotonicClock = () => performance.now()
