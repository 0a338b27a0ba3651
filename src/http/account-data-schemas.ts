import { Type } from '@sinclair/typebox'
import { SUPPORTED_API_VERSIONS } from './api-version.ts'

/** OpenAPI schemas of the link, Shopify and app endpoints and their admin API (responses are sent pre-serialized). */

const Str = (description?: string) => Type.String(description ? { description } : {})
const NullableStr = (description?: string) => Type.Union([Str(description), Type.Null()])
const Timestamp = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) })

export const shopSchema = Type.Object({ shop: Str('host name of a shop connected to the account') })

export const apiVersionHeaders = Type.Object({
  'x-api-version': Type.Optional(
    Type.String({
      description: `${SUPPORTED_API_VERSIONS.join(', ')}: current (summary) shape; without it: the earlier or full shape; another value: 400`,
    }),
  ),
})

export const appHeaders = Type.Object({
  'x-api-version': apiVersionHeaders.properties['x-api-version'],
  authorization: Type.Optional(Type.String({ description: 'Bearer <access token of a grant to the app owned by the x-api-key account>' })),
})

export const linkSchema = Type.Object({
  id: Str(),
  account_id: Str(),
  name: NullableStr(),
  created_at: Timestamp(),
})

export const connectedShopSchema = Type.Object({ shop: Str(), created_at: Timestamp() })

export const appSchema = Type.Object({ id: Str(), account_id: Str('the owning (developer) account'), name: Str(), created_at: Timestamp() })

export const grantSchema = Type.Object({
  id: Str('grant id, used to revoke it'),
  app_id: Str(),
  account_id: Str('the granting account, whose data the app reads'),
  scopes: Type.Array(Str()),
  created_at: Timestamp(),
  expires_at: Type.Union([Timestamp(), Type.Null()]),
  revoked_at: Type.Union([Timestamp(), Type.Null()]),
})

export const createdGrantSchema = Type.Intersect([
  grantSchema,
  Type.Object({ access_token: Str('shown once; send as Authorization: Bearer <access_token>') }),
])
