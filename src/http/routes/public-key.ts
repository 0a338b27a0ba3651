import type { FastifyInstance } from 'fastify'

/**
 * GET /v2/public-key: the SPKI PEM of the service's callback-signing key. Public (no API key): it
 * is a public key, and integrators fetch it once to verify `x-signature`. The PEM text itself by
 * default (what verifiers take as-is), `{"public_key": pem}` when the client asks for JSON only.
 */
export async function publicKeyRoutes(app: FastifyInstance, deps: { publicKeyPem: string }): Promise<void> {
  app.get(
    '/v2/public-key',
    {
      schema: {
        operationId: 'getPublicKey',
        summary: 'Public key that verifies x-signature of callbacks and records (SPKI PEM)',
        description: 'Served as application/x-pem-file text; with Accept: application/json as {"public_key": "<PEM>"}. No API key needed.',
        tags: ['callbacks'],
        security: [],
        response: {
          200: {
            description: 'The SPKI PEM public key (as {"public_key"} when only JSON is accepted)',
            content: {
              'application/x-pem-file': { schema: { type: 'string' } },
              'application/json': {
                schema: { type: 'object', properties: { public_key: { type: 'string' } }, required: ['public_key'] },
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const accept = request.headers.accept ?? ''
      reply.header('cache-control', 'public, max-age=300').header('vary', 'accept')
      if (/application\/json/i.test(accept) && !/(text\/plain|application\/x-pem-file|\*\/\*)/i.test(accept)) {
        return reply.type('application/json').send({ public_key: deps.publicKeyPem })
      }
      return reply.type('application/x-pem-file').send(deps.publicKeyPem)
    },
  )
}
