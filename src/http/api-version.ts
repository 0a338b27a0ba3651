import type { FastifyRequest } from 'fastify'
import { problem } from './problem.ts'

export const SUPPORTED_API_VERSIONS = ['2025-10'] as const
export type ApiVersion = (typeof SUPPORTED_API_VERSIONS)[number]

/** The request's `x-api-version`: undefined when absent (earlier shapes), 400 when unknown. */
export function apiVersionOf(request: FastifyRequest): ApiVersion | undefined {
  const raw = request.headers['x-api-version']
  if (raw === undefined) return undefined
  const value = Array.isArray(raw) ? raw[0] : raw
  if ((SUPPORTED_API_VERSIONS as readonly string[]).includes(value?.trim() ?? '')) return value!.trim() as ApiVersion
  throw problem(
    'UNSUPPORTED_API_VERSION',
    `x-api-version ${JSON.stringify(value)} is not supported; supported: ${SUPPORTED_API_VERSIONS.join(', ')}`,
  )
}
