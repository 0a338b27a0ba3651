import type { FastifyInstance } from 'fastify'
import type { DashboardDeps } from './deps.ts'
import { html } from './html.ts'
import { page, sendPage } from './layout.ts'

/** Callback endpoints: built on the webhook platform's use cases (src/admin/endpoints.ts) once they exist. */
export async function endpointRoutes(app: FastifyInstance, _deps: DashboardDeps): Promise<void> {
  app.get('/dashboard/endpoints', async (request, reply) =>
    sendPage(
      reply,
      page({ title: 'Endpoints', section: 'endpoints', csrfToken: request.dashboardSession!.csrfToken }, html`<p>Not available yet.</p>`),
    ),
  )
}
