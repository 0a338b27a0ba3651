import type { Db } from './infrastructure/database.ts'
import { open, seal } from './sealed-secret.ts'

export interface KeyPairPem {
  privateKeyPem: string
  publicKeyPem: string
}

/**
 * The service-wide key pair stored under `name`, generated on first use. Nodes starting together
 * may each generate one; the insert keeps the first and every node reads back the same pair. With
 * `secretsKey` the private key is stored sealed (plaintext rows from before still read).
 */
export async function serviceKeyPair(
  db: Db,
  name: string,
  generate: () => Promise<KeyPairPem>,
  secretsKey: Buffer | null,
): Promise<KeyPairPem> {
  const read = () => db.selectFrom('service_keys').select(['private_key_pem', 'public_key_pem']).where('name', '=', name).executeTakeFirst()
  let row = await read()
  if (!row) {
    const generated = await generate()
    await db
      .insertInto('service_keys')
      .values({
        name,
        private_key_pem: secretsKey ? seal(generated.privateKeyPem, secretsKey) : generated.privateKeyPem,
        public_key_pem: generated.publicKeyPem,
      })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute()
    row = await read()
    if (!row) throw new Error(`service key ${name} could not be stored`)
  }
  return { privateKeyPem: open(row.private_key_pem, secretsKey), publicKeyPem: row.public_key_pem }
}
