import { createServer } from 'node:net'

/** A TCP port free on 127.0.0.1 right now (for a child process that must be told its port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** Polls `check` (a throw counts as not yet) until it holds; fails with `describe()` after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, describe: () => string, pollMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      if (await check()) return
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`not ready within ${timeoutMs} ms: ${describe()}`)
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
}
