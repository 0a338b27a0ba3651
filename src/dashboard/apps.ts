import type { FastifyInstance } from 'fastify'
import { deleteApp, grantApp, listAppGrants, revokeGrant } from '../admin/apps.ts'
import { APP_SCOPES } from '../domain/app-scopes.ts'
import { findApp } from '../store/apps.ts'
import type { DashboardDeps } from './deps.ts'
import { time } from './format.ts'
import { html, type Html } from './html.ts'
import { actionButton, csrfField, notice, page, sendPage } from './layout.ts'

type Form = Record<string, string | undefined>

/** An app and the grants accounts gave it: grant (the access token shown once), revoke, delete the app. */
export async function appRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const appPage = async (appId: string, csrfToken: string, shown?: Html): Promise<{ status: number; body: string }> => {
    const found = await findApp(deps.db, appId)
    if (!found) return { status: 404, body: page({ title: 'App not found', section: 'accounts', csrfToken }, html`<p>No such app.</p>`) }
    const grants = await listAppGrants(deps, appId)
    const base = `/dashboard/apps/${encodeURIComponent(appId)}`
    const rows = (grants.kind === 'listed' ? grants.grants : []).map(
      (g) => html`<tr><th scope="row"><a href="/dashboard/accounts/${encodeURIComponent(g.accountId)}"><code>${g.accountId}</code></a></th>
        <td>${g.scopes.join(', ')}</td><td>${time(g.createdAt)}</td><td>${g.expiresAt ? time(g.expiresAt) : 'never'}</td>
        <td>${g.revokedAt ? html`revoked ${time(g.revokedAt)}` : actionButton(`/dashboard/grants/${encodeURIComponent(g.id)}/revoke`, 'Revoke', csrfToken, { app: appId }, true)}</td></tr>`,
    )
    const content = html`${shown ?? ''}
      <p>Owned by account <a href="/dashboard/accounts/${encodeURIComponent(found.accountId)}"><code>${found.accountId}</code></a>, created ${time(found.createdAt)}.</p>
      <section class="card" aria-labelledby="grants-h"><h2 id="grants-h">Grants</h2>
        ${rows.length === 0 ? html`<p class="muted">No grants yet.</p>` : html`<div class="table-wrap"><table><caption class="visually-hidden">Grants</caption><thead><tr><th scope="col">Granting account</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">State</th></tr></thead><tbody>${rows}</tbody></table></div>`}
        <form method="post" action="${base}/grants" class="stacked">${csrfField(csrfToken)}
          <div class="field"><label for="grant-account">Granting account id</label><input id="grant-account" name="account_id" required /></div>
          <fieldset><legend>Scopes</legend>${APP_SCOPES.map((scope, i) => html`<label class="check"><input type="checkbox" name="scope" value="${scope}" id="scope-${i}" /> ${scope}</label>`)}</fieldset>
          <div class="field"><label for="grant-expires">Expires at (optional, ISO 8601)</label><input id="grant-expires" name="expires_at" placeholder="2027-12-31T23:59:59Z" /></div>
          <button type="submit">Grant</button>
        </form>
      </section>
      <section class="card" aria-labelledby="danger-h"><h2 id="danger-h">Delete</h2><p>Deleting the app revokes all its grants.</p>
        ${actionButton(`${base}/delete`, 'Delete app', csrfToken, { account: found.accountId }, true)}</section>`
    return { status: 200, body: page({ title: `App ${found.name}`, section: 'accounts', csrfToken }, content) }
  }

  app.get<{ Params: { id: string } }>('/dashboard/apps/:id', async (request, reply) => {
    const answer = await appPage(request.params.id, request.dashboardSession!.csrfToken)
    return sendPage(reply, answer.body, answer.status)
  })

  app.post<{ Params: { id: string }; Body: Form & { scope?: string | string[] } }>('/dashboard/apps/:id/grants', async (request, reply) => {
    const body = request.body ?? {}
    const granted = await grantApp(deps, request.params.id, {
      accountId: body.account_id,
      scopes: [body.scope ?? []].flat(),
      expiresAt: body.expires_at || undefined,
    })
    const shown =
      granted.kind === 'created'
        ? html`<div class="notice notice-ok" role="status"><p>Access token of the new grant (shown only now; copy it):</p><p><code class="secret">${granted.accessToken}</code></p></div>`
        : notice(
            granted.kind === 'invalid' ? granted.errors.map((e) => `${e.path} ${e.message}`).join('; ') : `${granted.what} not found`,
            'error',
          )
    const answer = await appPage(request.params.id, request.dashboardSession!.csrfToken, shown)
    return sendPage(reply, answer.body, granted.kind === 'created' ? answer.status : 400)
  })

  app.post<{ Params: { id: string }; Body: Form }>('/dashboard/grants/:id/revoke', async (request, reply) => {
    await revokeGrant(deps, request.params.id)
    return reply.redirect(`/dashboard/apps/${encodeURIComponent(request.body?.app ?? '')}`, 303)
  })

  app.post<{ Params: { id: string }; Body: Form }>('/dashboard/apps/:id/delete', async (request, reply) => {
    await deleteApp(deps, request.params.id)
    return reply.redirect(`/dashboard/accounts/${encodeURIComponent(request.body?.account ?? '')}?notice=app-deleted`, 303)
  })
}
