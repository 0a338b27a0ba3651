// A callback receiver on plain Node `http`: `PAYWATCH_API_KEY=… node examples/node-http.ts` (port 4000).
import { createServer, type Server } from 'node:http'
import { createCallbackHandler, optionsFromEnv, type ReceiverOptions } from './receiver-core.ts'

export function startNodeReceiver(options: ReceiverOptions, port: number): Promise<Server> {
  const handle = createCallbackHandler(options)
  const server = createServer((request, response) => {
    if (request.method !== 'POST') return void response.writeHead(405).end()
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', async () => {
      try {
        // The raw bytes, exactly as sent: the signature is over them, not over a parsed object.
        const answer = await handle({ body: Buffer.concat(chunks), headers: request.headers })
        response.writeHead(answer.status, answer.body ? { 'content-type': 'application/json' } : {}).end(answer.body)
      } catch (error) {
        console.error(error)
        response.writeHead(500).end()
      }
    })
  })
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)))
}

if (import.meta.main) {
  const port = Number(process.env.PORT ?? 4000)
  await startNodeReceiver(optionsFromEnv(process.env), port)
  console.log(`receiver listening on http://127.0.0.1:${port}/ (callback URL)`)
}
