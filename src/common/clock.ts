/** Wall clock, injectable so that time-dependent behaviour is tested without sleeping. */
export type Clock = () => Date
export const systemClock: Clock = () => new Date()
