/** Retries after the first attempt (docs/api.md §4): the 26th failed attempt marks the delivery dead. */
export const MAX_CALLBACK_RETRIES = 25

/** A random source like Math.random: a number in [0, 1). Injected so schedules are testable. */
export type RandomSource = () => number

/** `rand(30)` of the formula: a random integer below 30. */
export const rand = (random: RandomSource, below: number): number => Math.min(below - 1, Math.floor(random() * below))

/** Seconds before retry number n + 1 (n = 0 for the first retry): (n ** 4) + 15 + (rand(30) * (n + 1)). */
export function retryDelaySeconds(n: number, random: RandomSource): number {
  return n ** 4 + 15 + rand(random, 30) * (n + 1)
}

export type NextStep = { kind: 'retry'; at: Date; delaySeconds: number } | { kind: 'dead' }

/**
 * After a failed attempt: `attemptsBefore` is how many attempts the delivery had before this one
 * (0 for the first), which is also the retry count n of the retry that follows it.
 */
export function afterFailure(attemptsBefore: number, now: Date, random: RandomSource): NextStep {
  if (attemptsBefore >= MAX_CALLBACK_RETRIES) return { kind: 'dead' }
  const delaySeconds = retryDelaySeconds(attemptsBefore, random)
  return { kind: 'retry', at: new Date(now.getTime() + delaySeconds * 1000), delaySeconds }
}
