import { readFields, type FieldTable, type ParseResult } from './request-fields.ts'

/**
 * The bodies of the endpoint operations (docs/api.md §8), each one field table that drives both its
 * reader and its OpenAPI schema. `url` is any URL of the endpoint: its scheme://host[:port] names it.
 */
const url = {
  kind: 'url',
  required: true,
  description: 'the endpoint: scheme://host[:port], or any callback URL on it (its path is ignored, except by test)',
} as const

/** POST /v2/endpoints/enable, POST /v2/endpoints/test */
export const endpointRequestFields = { url } as const satisfies FieldTable

/** POST /v2/endpoints/recover */
export const endpointRecoverRequestFields = {
  url,
  since: {
    kind: 'timestamp',
    required: true,
    description: 'ISO 8601: deliveries whose last attempt failed, or that died, at or after this time are sent again',
  },
} as const satisfies FieldTable

export function readEndpointRequest(body: Record<string, unknown>): ParseResult<{ url: string }> {
  return readFields(body, endpointRequestFields, (read) => ({ url: read.url('url') ?? '' }))
}

export function readEndpointRecoverRequest(body: Record<string, unknown>): ParseResult<{ url: string; since: Date }> {
  return readFields(body, endpointRecoverRequestFields, (read, errors) => {
    const url = read.url('url') ?? ''
    // The timestamp reader treats every timestamp as optional: absence is checked here.
    if (read.raw('since') === undefined || read.raw('since') === null) errors.add('since', 'is required')
    return { url, since: read.timestamp('since') ?? new Date(0) }
  })
}
