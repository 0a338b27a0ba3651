import type { FastifyReply } from 'fastify'
import { html, type Html } from './html.ts'
import { ASSET_VERSION } from './assets.ts'

export interface PageOptions {
  title: string
  /** The nav entry shown as current. */
  section?: 'overview' | 'payments' | 'accounts' | 'endpoints'
  /** The signed-in session's CSRF token (the sign-out form); absent on the sign-in page. */
  csrfToken?: string
  /** What the page listens to for live updates (server-sent events), e.g. `overview` or `payment:<secret_id>`. */
  live?: string
}

const NAV = [
  ['overview', '/dashboard', 'Overview'],
  ['payments', '/dashboard/payments', 'Payments'],
  ['accounts', '/dashboard/accounts', 'Accounts'],
  ['endpoints', '/dashboard/endpoints', 'Endpoints'],
] as const

/** The page shell: head with the stylesheet and script from the package, navigation, and the main content. */
export function page(options: PageOptions, content: Html): string {
  const nav = options.csrfToken
    ? html`<nav aria-label="Main">
        <ul>
          ${NAV.map(
            ([key, href, label]) =>
              html`<li><a href="${href}"${key === options.section ? html` aria-current="page"` : ''}>${label}</a></li>`,
          )}
        </ul>
        <form method="post" action="/dashboard/sign-out" class="sign-out">
          <input type="hidden" name="csrf" value="${options.csrfToken}" />
          <button type="submit" class="link">Sign out</button>
        </form>
        <form method="post" action="/dashboard/sign-out-all" class="sign-out">
          <input type="hidden" name="csrf" value="${options.csrfToken}" />
          <button type="submit" class="link">Sign out all sessions</button>
        </form>
      </nav>`
    : ''
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>${options.title} · Paywatch</title>
<link rel="stylesheet" href="/dashboard/assets/dashboard.css?v=${ASSET_VERSION}" />
<script src="/dashboard/assets/dashboard.js?v=${ASSET_VERSION}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/dashboard">Paywatch</a>${nav}</header>
<main id="main" tabindex="-1"${options.live ? html` data-live="${options.live}"` : ''}>
<h1>${options.title}</h1>
${content}
</main>
</body>
</html>`.text
}

/** A POST form's hidden CSRF field: every form of a signed-in page carries it. */
export const csrfField = (token: string): Html => html`<input type="hidden" name="csrf" value="${token}" />`

/** A one-button POST form (Revoke, Enable, Redeliver…). */
export function actionButton(action: string, label: string, csrfToken: string, fields: Record<string, string> = {}, danger = false): Html {
  return html`<form method="post" action="${action}" class="inline">
    ${csrfField(csrfToken)}${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
    <button type="submit"${danger ? html` class="danger"` : ''}>${label}</button>
  </form>`
}

/** A message above the content: the result of the last action, or an error. */
export function notice(text: string | undefined, kind: 'ok' | 'error' = 'ok'): Html {
  if (!text) return html``
  return html`<p class="notice notice-${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`
}

/** An HTML answer. */
export const sendPage = (reply: FastifyReply, body: string, status = 200): FastifyReply =>
  reply.code(status).type('text/html; charset=utf-8').send(body)
