import { Type } from '@sinclair/typebox'
import { SUPPORTED_API_VERSIONS } from './api-version.ts'

/** OpenAPI schemas of the link, Shopify and app endpoints and their admin API (responses are sent pre-serialized). */

const Str = (description?: string) => Type.String(description ? { description } : {})
const NullableStr = (description?: string) => Type.Union([Str(description), Type.Null()])
const Timestamp = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) })

/** docs/api.md, records and endpoints: sent with `x-api-version`. */
export const summaryRecordSchema = Type.Object(
  {
    blockchain: Str(),
    transaction: Str(),
    sender: Str(),
    receiver: Str(),
    token: Str(),
    amount: Str('decimal string'),
    payload: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    after_block: Str(),
    commitment: Type.Union([Type.Literal('confirmed'), Type.Literal('finalized')]),
    confirmations: Type.Integer(),
    created_at: Timestamp(),
    confirmed_at: Timestamp(),
  },
  { description: 'Payment summary record (current shape, with x-api-version)' },
)

/** docs/api.md, records and endpoints: link payments without `x-api-version`. */
export const earlierLinkRecordSchema = Type.Object(
  {
    status: Str('always "success" here'),
    failed_reason: NullableStr(),
    blockchain: Str(),
    transaction: Str(),
    sender: Str(),
    receiver: Str(),
    token: Str(),
    amount: Str('decimal string'),
    payload: NullableStr('the payload as a string of serialized JSON'),
    confirmed_at: Timestamp(),
  },
  { description: 'Earlier link payment record (without x-api-version)' },
)

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
