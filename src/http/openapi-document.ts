import type { RouteOptions } from 'fastify'
import { webhooks } from './openapi-webhooks.ts'

/**
 * The few rules /openapi.json applies to every route alike (docs/api.md §8), so that no route can be
 * documented without them. Whatever is particular to a route (its answers, media types, signed headers,
 * callbacks) the route states in its own schema.
 * - On each route, as it is added: an `operationId` (the route's own when it names one, else made from the
 *   method and path: `get /admin/accounts/:id/api-keys` → `getAdminAccountsIdApiKeys`); 204 for a DELETE that
 *   documents no other success.
 * - On the built document: answers without a description get their status's text; every callback operation
 *   gets the summary and headers of the webhook of its name (src/http/openapi-webhooks.ts).
 */

type Json = Record<string, any>

export function documentRoute(route: RouteOptions): void {
  const method = [route.method].flat()[0]!.toLowerCase()
  if (method === 'head') return
  const schema = { ...route.schema } as Json
  schema.operationId ??= operationIdOf(method, route.url)
  const response = { ...schema.response } as Json
  if (method === 'delete' && !Object.keys(response).some((status) => status.startsWith('2'))) {
    response['204'] = { description: 'Deleted', type: 'null' }
  }
  schema.response = response
  route.schema = schema
}

function operationIdOf(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean)
  return method + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')
}

const STATUS_TEXT: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted', '204': 'No content' }
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const

export function finishDocument(document: Json): Json {
  for (const item of Object.values<Json>(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined
      if (!operation) continue
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        if (response.description === 'Default Response') response.description = STATUS_TEXT[status] ?? 'Answer'
      }
      for (const [name, expressions] of Object.entries<Json>(operation.callbacks ?? {})) {
        for (const pathItem of Object.values<Json>(expressions)) {
          for (const callback of Object.values<Json>(pathItem)) {
            // What is sent is described once, as the webhook of the same name: its summary and headers.
            const sent = (webhooks as Json)[name]?.post as Json | undefined
            callback.operationId ??= `${name}Callback`
            if (sent) Object.assign(callback, { summary: sent.summary, parameters: sent.parameters })
          }
        }
      }
    }
  }
  return document
}
