import type { FastifyPluginAsync } from 'fastify'
import type { Callbacks } from '../../callbacks/index.ts'
import { generateRsaKeyPair } from '../../callbacks/signer.ts'
import type { Common } from '../../common/common.ts'
import type { Db } from '../../store/database.ts'
import { adminIntegrationRoutes } from './admin-integrations.ts'
import { deliveryRoutes } from './deliveries.ts'
import { publicKeyRoutes } from './public-key.ts'

/** The routes of signed callbacks: delivery tools (API key), the public key and integrations (admin). */
export function callbackRoutes(common: Common, db: Db, callbacks: Callbacks): { api: FastifyPluginAsync[]; public: FastifyPluginAsync[] } {
  const { config, clock } = common
  return {
    api: [deliveryRoutes({ db, clock, onScheduled: () => callbacks.worker.wake() })],
    public: [
      async (app) => publicKeyRoutes(app, { publicKeyPem: callbacks.signer.servicePublicKeyPem }),
      async (app) => adminIntegrationRoutes(app, { db, adminToken: config.adminToken, generateKeyPair: generateRsaKeyPair, secretsKey: config.secretsKey }),
    ],
  }
}
