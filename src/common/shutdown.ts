import type { Logger } from 'pino'

/** Ordered clean-up on SIGTERM: hooks run last-registered first. */
export interface Shutdown {
  add(name: string, hook: () => Promise<void> | void): void
  run(): Promise<void>
  readonly signal: AbortSignal
}

export function createShutdown(logger?: Logger): Shutdown {
  const hooks: { name: string; hook: () => Promise<void> | void }[] = []
  const controller = new AbortController()
  let running: Promise<void> | undefined
  return {
    add: (name, hook) => void hooks.push({ name, hook }),
    signal: controller.signal,
    run() {
      running ??= (async () => {
        controller.abort()
        for (const { name, hook } of hooks.reverse()) {
          try {
            await hook()
          } catch (error) {
            logger?.error({ err: error, hook: name }, 'shutdown hook failed')
          }
        }
      })()
      return running
    },
  }
}
