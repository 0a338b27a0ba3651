// A Next.js-style route handler (app/api/paywatch/route.ts): Web `Request` in, `Response` out, so it runs on
// Node and edge runtimes alike. Settings come from the environment, read on the first callback.
import { createCallbackHandler, optionsFromEnv } from './receiver-core.ts'

let handle: ReturnType<typeof createCallbackHandler> | undefined

export async function POST(request: Request): Promise<Response> {
  handle ??= createCallbackHandler(optionsFromEnv(process.env))
  // The raw bytes, exactly as sent: never request.json() before verifying.
  const body = new Uint8Array(await request.arrayBuffer())
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => (headers[name] = value))
  const answer = await handle({ body, headers })
  return new Response(answer.body ?? null, {
    status: answer.status,
    headers: answer.body ? { 'content-type': 'application/json' } : {},
  })
}
