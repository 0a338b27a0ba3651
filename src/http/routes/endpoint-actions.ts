import { enableEndpoint, recoverEndpoint, testEndpoint, type EndpointDeps } from '../../admin/endpoints.ts'
import { endpointJson } from '../../admin/records.ts'
import { readEndpointRecoverRequest, readEndpointRequest } from '../../domain/endpoint-request.ts'
import { notFound, problem, validationFailed } from '../problem.ts'
import { objectBody } from './admin.ts'

/** The outcome of an endpoint operation that named no endpoint of the account. */
function endpointProblem(outcome: { kind: 'invalid-url' } | { kind: 'not-found'; what: string }) {
  return outcome.kind === 'invalid-url'
    ? validationFailed([{ path: 'url', message: 'must be an absolute http(s) URL' }])
    : notFound(`${outcome.what} of this account`)
}

/**
 * Enable, recover and test of one account's endpoint, from a request body to the answer's body: the
 * same for the account's own routes (/v2/endpoints/…, account of the API key) and the admin routes
 * (/admin/accounts/{id}/endpoints/…), which differ only in where the account comes from.
 */
export function endpointActions(deps: EndpointDeps) {
  return {
    async enable(accountId: string, body: unknown) {
      const read = readEndpointRequest(objectBody(body))
      if (!read.ok) throw validationFailed(read.errors)
      const outcome = await enableEndpoint(deps, accountId, read.value.url)
      if (outcome.kind !== 'enabled') throw endpointProblem(outcome)
      return endpointJson(outcome.endpoint)
    },
    async recover(accountId: string, body: unknown) {
      const read = readEndpointRecoverRequest(objectBody(body))
      if (!read.ok) throw validationFailed(read.errors)
      const outcome = await recoverEndpoint(deps, accountId, read.value.url, read.value.since)
      if (outcome.kind !== 'recovered') throw endpointProblem(outcome)
      return { redelivered: outcome.redelivered }
    },
    async test(accountId: string, body: unknown) {
      const read = readEndpointRequest(objectBody(body))
      if (!read.ok) throw validationFailed(read.errors)
      const outcome = await testEndpoint(deps, accountId, read.value.url)
      if (outcome.kind === 'unavailable') throw problem('INTERNAL_ERROR', 'test events cannot be sent by this process')
      // Refused as POST /v2/payments refuses such a callback: the field names the reason.
      if (outcome.kind === 'refused') throw validationFailed([{ path: 'url', message: outcome.message }])
      if (outcome.kind === 'not-found') throw notFound(outcome.what)
      if (outcome.kind !== 'sent') throw endpointProblem(outcome)
      return { id: outcome.id }
    },
  }
}
