import type { FastifyInstance, FastifyReply } from 'fastify'

export interface HomeRoutesDeps {
  adminToken: string | null
  /** Names of the tracked chains. */
  chains: string[]
}

/** The headers of the dashboard's pages (src/dashboard/routes.ts): nothing loads but the page itself. */
function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .header('content-security-policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
    .type('text/html; charset=utf-8')
}

const page = (title: string, body: string[]) =>
  `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${title}</title></head><body>\n${body.join('\n')}\n</body></html>\n`

/**
 * `GET /`: where to go from here (docs/operations.md, "First start"): the API reference, the dashboard and
 * the OpenAPI document, and what is not set up yet. Without an admin token `/dashboard` says how to turn it on.
 */
export async function homeRoutes(app: FastifyInstance, deps: HomeRoutesDeps): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (_request, reply) => {
    const missing = [
      deps.chains.length === 0 &&
        '<li>No blockchain is tracked: set <code>PAYWATCH_RPC_&lt;CHAIN&gt;</code> (e.g. <code>PAYWATCH_RPC_ETHEREUM</code>), or try <code>npx paywatch dev</code>.</li>',
      !deps.adminToken && '<li>The admin API and the dashboard are off: set <code>PAYWATCH_ADMIN_TOKEN</code>.</li>',
    ].filter(Boolean) as string[]
    return pageHeaders(reply).send(
      page('Paywatch', [
        '<h1>Paywatch</h1>',
        '<p>Blockchain payment tracking.</p>',
        '<ul>',
        '<li><a href="/docs">/docs</a>: the API reference</li>',
        '<li><a href="/dashboard">/dashboard</a>: the operator dashboard</li>',
        '<li><a href="/openapi.json">/openapi.json</a>: the OpenAPI document</li>',
        '</ul>',
        ...(missing.length ? ['<h2>Not set up yet</h2>', '<ul>', ...missing, '</ul>'] : []),
        `<p>Tracked blockchains: ${deps.chains.length ? deps.chains.join(', ') : 'none'}.</p>`,
      ]),
    )
  })
  if (deps.adminToken) return
  // The dashboard exists only with an admin token (src/dashboard/routes.ts); say so instead of a bare 404.
  app.get('/dashboard', { schema: { hide: true } }, async (_request, reply) =>
    pageHeaders(reply.code(404)).send(
      page('Dashboard off', [
        '<h1>The dashboard is off</h1>',
        '<p>Set <code>PAYWATCH_ADMIN_TOKEN</code> (a long random secret, e.g. <code>openssl rand -hex 24</code>) and restart; then sign in here with it.</p>',
        '<p><a href="/">Back</a></p>',
      ]),
    ),
  )
}
