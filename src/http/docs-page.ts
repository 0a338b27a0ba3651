import type { FastifyReply, FastifyRequest } from 'fastify'

/** The /docs page under Paywatch's name: page title and a text logo instead of the stock Swagger ones. */
const logo = `<svg xmlns="http://www.w3.org/2000/svg" width="180" height="40" viewBox="0 0 180 40"><text x="0" y="29" font-family="system-ui, sans-serif" font-size="26" font-weight="700" fill="#ffffff">Paywatch</text></svg>`

/**
 * /docs lives on the dashboard's origin: it gets the same kind of protection. Its scripts and styles
 * come from this server only (Swagger UI sets style attributes, hence 'unsafe-inline' for styles, never
 * for scripts; the logo is a data: image); "Try it out" talks to this server only; no other site may
 * frame it (clickjacking).
 */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

export const docsPage = {
  theme: { title: 'Paywatch API' },
  logo: { type: 'image/svg+xml', content: Buffer.from(logo), href: '/docs', target: '_self' as const },
  staticCSP: DOCS_CSP,
}

/** The frame and sniffing protection of every /docs answer (the page, its scripts and styles). */
export async function docsHeaders(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header('x-frame-options', 'DENY')
  reply.header('x-content-type-options', 'nosniff')
  reply.header('referrer-policy', 'same-origin')
}
