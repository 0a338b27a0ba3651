import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createAccount, createApiKey, listAccounts, listApiKeys, revokeApiKey } from '../admin/accounts.ts'
import { createApp, listApps } from '../admin/apps.ts'
import { createIntegration, listIntegrations } from '../admin/integrations.ts'
import { createLink, listLinks, removeLink } from '../admin/links.ts'
import { accountRequestFields, linkRequestFields, readOptionalName, readRequiredName } from '../admin/names.ts'
import { connectShop, disconnectShop, listShops } from '../admin/shops.ts'
import { findAccount } from '../store/accounts.ts'
import type { DashboardDeps } from './deps.ts'
import { time } from './format.ts'
import { html, type Html } from './html.ts'
import { actionButton, csrfField, notice, page, sendPage } from './layout.ts'

type Form = Record<string, string | undefined>
type Answer = { text: string; kind: 'ok' | 'error' }

/** By the code a redirect carries (`?notice=`): a Map, so no code from a link reaches an object's prototype. */
const NOTICES = new Map<string, Answer>(
  Object.entries({
    'key-revoked': { text: 'The API key is revoked: this node refuses it at once, every other node within 5 seconds.', kind: 'ok' },
    'link-created': { text: 'The link is created.', kind: 'ok' },
    'link-removed': { text: 'The link is removed: it takes no new payments.', kind: 'ok' },
    'shop-connected': { text: 'The shop is connected.', kind: 'ok' },
    'shop-disconnected': { text: 'The shop is disconnected.', kind: 'ok' },
    'app-created': { text: 'The app is created.', kind: 'ok' },
    'app-deleted': { text: 'The app is deleted with all its grants.', kind: 'ok' },
    invalid: { text: 'That value was not accepted; see the field rules.', kind: 'error' },
  }),
)

const accountUrl = (id: string, code?: string) => `/dashboard/accounts/${encodeURIComponent(id)}${code ? `?notice=${code}` : ''}`

/** Accounts with their API keys, integrations, links, shops and apps, through the admin use cases. */
export async function accountRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get('/dashboard/accounts', async (request, reply) => {
    const csrfToken = request.dashboardSession!.csrfToken
    const accounts = await listAccounts(deps)
    const content = html`<form method="post" action="/dashboard/accounts" class="card inline-form">
        ${csrfField(csrfToken)}
        <div class="field grow"><label for="name">New account name</label><input id="name" name="name" required maxlength="200" /></div>
        <button type="submit">Create account</button>
      </form>
      <div class="table-wrap"><table><caption class="visually-hidden">Accounts</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Created</th></tr></thead>
        <tbody>${accounts.map((a) => html`<tr><th scope="row"><a href="${accountUrl(a.id)}">${a.name}</a></th><td><code>${a.id}</code></td><td>${time(a.createdAt)}</td></tr>`)}</tbody>
      </table></div>`
    return sendPage(reply, page({ title: 'Accounts', section: 'accounts', csrfToken }, content))
  })

  app.post<{ Body: Form }>('/dashboard/accounts', async (request, reply) => {
    const read = readRequiredName({ name: request.body?.name }, accountRequestFields)
    if (!read.ok) return reply.redirect('/dashboard/accounts', 303)
    const created = await createAccount(deps, read.value.name)
    return reply.redirect(accountUrl(created.account.id), 303)
  })

  app.get<{ Params: { id: string }; Querystring: { notice?: string } }>('/dashboard/accounts/:id', async (request, reply) =>
    accountPage(deps, request, reply, request.params.id, NOTICES.get(request.query.notice ?? '')),
  )

  app.post<{ Params: { id: string } }>('/dashboard/accounts/:id/api-keys', async (request, reply) => {
    const created = await createApiKey(deps, request.params.id)
    if (created.kind !== 'created') return reply.redirect('/dashboard/accounts', 303)
    deps.onKeyCreated(created.key.key)
    const shown = html`<div class="notice notice-ok" role="status"><p>New API key (shown only now; copy it):</p><p><code class="secret" data-field="new-key">${created.key.key}</code></p></div>`
    return accountPage(deps, request, reply, request.params.id, undefined, shown)
  })

  app.post<{ Params: { id: string }; Body: Form }>('/dashboard/api-keys/:id/revoke', async (request, reply) => {
    const revoked = await revokeApiKey(deps, request.params.id)
    if (revoked.kind === 'revoked') deps.onKeyRevoked(request.params.id)
    return reply.redirect(accountUrl(request.body?.account ?? '', 'key-revoked'), 303)
  })

  app.post<{ Params: { id: string }; Body: Form }>('/dashboard/accounts/:id/integrations', async (request, reply) => {
    const name = readOptionalName({ name: request.body?.name || undefined }, linkRequestFields)
    const created = await createIntegration(
      { db: deps.db, clock: deps.clock, generateKeyPair: deps.generateKeyPair, secretsKey: deps.secretsKey, checkStoredKeys: false },
      request.params.id,
      name.ok ? name.value.name : null,
      { reversalEvents: request.body?.reversal_events === 'on' },
    )
    if (created.kind !== 'created') return reply.redirect('/dashboard/accounts', 303)
    const shown = html`<div class="notice notice-ok" role="status">
      <p>Integration <code>${created.integration.id}</code> created. Its webhook secret (shown only now; copy it):</p>
      <p><code class="secret" data-field="webhook-secret">${created.webhookSecret}</code></p>
      <p>Its public key (integrators verify <code>x-signature</code> with it):</p><pre>${created.integration.publicKeyPem}</pre></div>`
    return accountPage(deps, request, reply, request.params.id, undefined, shown)
  })

  app.post<{ Params: { id: string }; Body: Form }>('/dashboard/accounts/:id/links', async (request, reply) => {
    const name = readOptionalName({ name: request.body?.name || undefined }, linkRequestFields)
    if (!name.ok) return reply.redirect(accountUrl(request.params.id, 'invalid'), 303)
    await createLink(deps, request.params.id, name.value.name)
    return reply.redirect(accountUrl(request.params.id, 'link-created'), 303)
  })

  app.post<{ Params: { id: string }; Body: Form }>('/dashboard/links/:id/remove', async (request, reply) => {
    await removeLink(deps, request.params.id)
    return reply.redirect(accountUrl(request.body?.account ?? '', 'link-removed'), 303)
  })

  app.post<{ Params: { id: string }; Body: Form }>('/dashboard/accounts/:id/shops', async (request, reply) => {
    const connected = await connectShop(deps, request.params.id, request.body?.shop)
    return reply.redirect(accountUrl(request.params.id, connected.kind === 'connected' ? 'shop-connected' : 'invalid'), 303)
  })

  app.post<{ Params: { id: string }; Body: Form }>('/dashboard/accounts/:id/shops/remove', async (request, reply) => {
    await disconnectShop(deps, request.params.id, request.body?.shop ?? '')
    return reply.redirect(accountUrl(request.params.id, 'shop-disconnected'), 303)
  })

  app.post<{ Params: { id: string }; Body: Form }>('/dashboard/accounts/:id/apps', async (request, reply) => {
    const created = await createApp(deps, request.params.id, request.body?.name)
    return reply.redirect(accountUrl(request.params.id, created.kind === 'created' ? 'app-created' : 'invalid'), 303)
  })
}

async function accountPage(
  deps: DashboardDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  accountId: string,
  answer?: Answer,
  shown?: Html,
) {
  const csrfToken = request.dashboardSession!.csrfToken
  const account = await findAccount(deps.db, accountId)
  if (!account)
    return sendPage(reply, page({ title: 'Account not found', section: 'accounts', csrfToken }, html`<p>No such account.</p>`), 404)
  const [keys, integrations, links, shops, apps] = await Promise.all([
    listApiKeys(deps, accountId),
    listIntegrations(deps, accountId),
    listLinks(deps, accountId),
    listShops(deps, accountId),
    listApps(deps, accountId),
  ])
  const base = `/dashboard/accounts/${encodeURIComponent(accountId)}`
  const section = (id: string, title: string, body: Html) =>
    html`<section class="card" aria-labelledby="${id}"><h2 id="${id}">${title}</h2>${body}</section>`
  const table = (caption: string, head: string[], rows: Html[]) =>
    rows.length === 0
      ? html`<p class="muted">None yet.</p>`
      : html`<div class="table-wrap"><table><caption class="visually-hidden">${caption}</caption><thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`
  const content = html`${notice(answer?.text, answer?.kind)}${shown ?? ''}
    <p>Id <code>${account.id}</code>, created ${time(account.createdAt)}. <a href="/dashboard/payments?account=${encodeURIComponent(account.id)}">Its payments</a></p>
    ${section(
      'keys-h',
      'API keys',
      html`${table(
        'API keys',
        ['Prefix', 'Created', 'State', ''],
        (keys.kind === 'listed' ? keys.keys : []).map(
          (k) => html`<tr><th scope="row"><code>${k.prefix}…</code></th><td>${time(k.createdAt)}</td>
            <td>${k.revokedAt ? html`revoked ${time(k.revokedAt)}` : 'active'}</td>
            <td>${k.revokedAt ? '' : actionButton(`/dashboard/api-keys/${encodeURIComponent(k.id)}/revoke`, 'Revoke', csrfToken, { account: accountId }, true)}</td></tr>`,
        ),
      )}${actionButton(`${base}/api-keys`, 'Create API key', csrfToken)}`,
    )}
    ${section(
      'integrations-h',
      'Integrations',
      html`${table(
        'Integrations',
        ['Name', 'Id', 'Created'],
        (integrations.kind === 'listed' ? integrations.integrations : []).map(
          (i) =>
            html`<tr><th scope="row">${i.name ?? html`<span class="muted">unnamed</span>`}</th><td><code>${i.id}</code></td><td>${time(i.createdAt)}</td></tr>`,
        ),
      )}
      <form method="post" action="${base}/integrations" class="inline-form">${csrfField(csrfToken)}
        <div class="field grow"><label for="integration-name">Integration name (optional)</label><input id="integration-name" name="name" maxlength="200" /></div>
        <label class="check"><input type="checkbox" name="reversal_events" id="reversal-events" /> Send reversal events</label>
        <button type="submit">Create integration</button></form>`,
    )}
    ${section(
      'links-h',
      'Links',
      html`${table(
        'Links',
        ['Name', 'Id', 'Created', ''],
        (links.kind === 'listed' ? links.links : []).map(
          (
            l,
          ) => html`<tr><th scope="row">${l.name ?? html`<span class="muted">unnamed</span>`}</th><td><code>${l.id}</code></td><td>${time(l.createdAt)}</td>
            <td>${actionButton(`/dashboard/links/${encodeURIComponent(l.id)}/remove`, 'Remove', csrfToken, { account: accountId }, true)}</td></tr>`,
        ),
      )}
      <form method="post" action="${base}/links" class="inline-form">${csrfField(csrfToken)}
        <div class="field grow"><label for="link-name">Link name (optional)</label><input id="link-name" name="name" maxlength="200" /></div>
        <button type="submit">Create link</button></form>`,
    )}
    ${section(
      'shops-h',
      'Shops',
      html`${table(
        'Shops',
        ['Shop', 'Connected', ''],
        (shops.kind === 'listed' ? shops.shops : []).map(
          (s) => html`<tr><th scope="row">${s.shop}</th><td>${time(s.createdAt)}</td>
            <td>${actionButton(`${base}/shops/remove`, 'Disconnect', csrfToken, { shop: s.shop }, true)}</td></tr>`,
        ),
      )}
      <form method="post" action="${base}/shops" class="inline-form">${csrfField(csrfToken)}
        <div class="field grow"><label for="shop">Shop host name</label><input id="shop" name="shop" required placeholder="example.myshopify.com" /></div>
        <button type="submit">Connect shop</button></form>`,
    )}
    ${section(
      'apps-h',
      'Apps',
      html`${table(
        'Apps',
        ['Name', 'Id', 'Created'],
        (apps.kind === 'listed' ? apps.apps : []).map(
          (a) =>
            html`<tr><th scope="row"><a href="/dashboard/apps/${encodeURIComponent(a.id)}">${a.name}</a></th><td><code>${a.id}</code></td><td>${time(a.createdAt)}</td></tr>`,
        ),
      )}
      <form method="post" action="${base}/apps" class="inline-form">${csrfField(csrfToken)}
        <div class="field grow"><label for="app-name">App name</label><input id="app-name" name="name" required maxlength="200" /></div>
        <button type="submit">Create app</button></form>`,
    )}`
  return sendPage(reply, page({ title: `Account ${account.name}`, section: 'accounts', csrfToken }, content))
}
