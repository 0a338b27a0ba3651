import { Type } from '@sinclair/typebox'

/**
 * OpenAPI schemas of the admin answers about accounts, API keys and integrations (records made in
 * src/admin/records.ts). Open objects (`additionalProperties`): Fastify serializes with these schemas,
 * and a field added to a record must not be dropped from the answer.
 */

const open = { additionalProperties: true }
const Timestamp = () => Type.String({ format: 'date-time' })

export const accountSchema = Type.Object({ id: Type.String(), name: Type.String(), created_at: Timestamp() }, open)

export const createdApiKeySchema = Type.Object(
  { id: Type.String(), key: Type.String({ description: 'the API key itself, shown only in this answer' }) },
  open,
)

export const apiKeySchema = Type.Object(
  {
    id: Type.String(),
    prefix: Type.String({ description: 'first characters of the key, to recognise it' }),
    created_at: Timestamp(),
    revoked_at: Type.Union([Timestamp(), Type.Null()]),
  },
  open,
)

export const integrationSchema = Type.Object(
  {
    id: Type.String(),
    account_id: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    public_key: Type.String({ description: 'SPKI PEM that verifies the x-signature of this integration’s callbacks' }),
    reversal_events: Type.Boolean({ description: 'payment.reverted / payment.reconfirmed callbacks are sent (docs/api.md §8)' }),
    created_at: Timestamp(),
  },
  open,
)

/** The creation answer: the record plus its Standard Webhooks secret, shown only here. */
export const createdIntegrationSchema = Type.Composite(
  [
    integrationSchema,
    Type.Object({ webhook_secret: Type.String({ description: 'whsec_…: its Standard Webhooks secret, shown only here' }) }),
  ],
  open,
)
