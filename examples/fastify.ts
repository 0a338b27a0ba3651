// A callback receiver on Fastify: `PAYWATCH_API_KEY=… node examples/fastify.ts` (port 4000).
import Fastify, { type FastifyInstance } from 'fastify'
import { createCallbackHandler, optionsFromEnv, type ReceiverOptions } from './receiver-core.ts'

export async function startFastifyReceiver(options: ReceiverOptions, port: number): Promise<FastifyInstance> {
  const handle = createCallbackHandler(options)
  const app = Fastify()
  // Keep the body as the raw bytes: the signature is over them, not over a re-serialized object.
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body))
  app.post('/callback', async (request, reply) => {
    const answer = await handle({ body: request.body as Buffer, headers: request.headers })
    reply.code(answer.status)
    return answer.body ? reply.type('application/json').send(answer.body) : reply.send()
  })
  await app.listen({ port, host: '127.0.0.1' })
  return app
}

if (import.meta.main) {
  const port = Number(process.env.PORT ?? 4000)
  await startFastifyReceiver(optionsFromEnv(process.env), port)
  console.log(`receiver listening on http://127.0.0.1:${port}/callback (callback URL)`)
}
