import type { FastifyRequest } from 'fastify'
import type { Clock } from '../common/clock.ts'
import { grantsScope, type AppScope } from '../domain/app-scopes.ts'
import { authenticateAccessToken } from '../store/app-grants.ts'
import type { Db } from '../store/infrastructure/database.ts'
import { callerOf } from './auth.ts'
import { problem } from './problem.ts'

const MAX_TOKEN_LENGTH = 200

const unauthorized = (detail: string, error = 'invalid_token') =>
  problem('UNAUTHORIZED', detail, { headers: { 'www-authenticate': `Bearer error="${error}"` } })

/**
 * Authorizes an app request (docs/api.md §2): the x-api-key (already checked) is the app
 * owner's, and `Authorization: Bearer <token>` is an active grant to one of that account's apps with
 * the needed scope. Answers the granting account, whose data is served. A missing, unknown, revoked
 * or expired token, or one granted to another account's app, is a 401; a missing scope a 403.
 */
export function createAppTokenAuth(db: Db, clock: Clock) {
  return async (request: FastifyRequest, scope: AppScope): Promise<{ grantingAccountId: string }> => {
    const caller = callerOf(request)
    const header = request.headers.authorization
    const match = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null
    if (!match) throw unauthorized('send the access token of a grant to your app as Authorization: Bearer <token>', 'invalid_request')
    const token = match[1]!
    const found = token.length <= MAX_TOKEN_LENGTH ? await authenticateAccessToken(db, token, clock()) : undefined
    if (!found || found.appOwnerId !== caller.accountId)
      throw unauthorized('the access token is unknown, revoked, expired or not granted to an app of this API key')
    if (!grantsScope(found.grant.scopes, scope)) {
      throw problem('FORBIDDEN', `the access token lacks the scope ${scope}`, {
        headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
      })
    }
    return { grantingAccountId: found.grant.accountId }
  }
}

export type AppTokenAuth = ReturnType<typeof createAppTokenAuth>
