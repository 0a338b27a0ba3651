import type { FastifyPluginAsync } from 'fastify'
import type { Callbacks } from '../../callbacks/index.ts'
import { generateRsaKeyPair } from '../../callbacks/signer.ts'
import type { Common } from '../../common/common.ts'
import type { Subsystem } from '../../common/subsystem.ts'
import type { Db } from '../../store/infrastructure/database.ts'
import { adminEndpointRoutes } from './admin-endpoints.ts'
import { adminIntegrationRoutes } from './admin-integrations.ts'
import { endpointRoutes } from './endpoints.ts'
import { deliveryRoutes } from './deliveries.ts'
import { publicKeyRoutes } from './public-key.ts'

/**
 * The callbacks subsystem with its routes: delivery tools (API key), the public key and integrations
 * (admin). The routes are added here because callbacks/ sits below http/ in the layers.
 */
export function withCallbackRoutes(common: Common, db: Db, callbacks: Callbacks): Subsystem {
  const { config, clock } = common
  const endpointDeps = {
    db,
    clock,
    onScheduled: () => callbacks.worker.endpointsChanged(),
    sendTestEvent: callbacks.sendTestEvent,
  }
  const adminRoutes: FastifyPluginAsync[] = [
    async (app) =>
      adminIntegrationRoutes(app, {
        db,
        clock,
        generateKeyPair: generateRsaKeyPair,
        secretsKey: config.secretsKey,
      }),
    async (app) =>
      adminEndpointRoutes(app, {
        ...endpointDeps,
        secretsKey: config.secretsKey,
        onRotated: () => callbacks.secrets.forget(),
      }),
  ]
  return {
    ...callbacks,
    apiRoutes: [deliveryRoutes({ db, clock, onScheduled: () => callbacks.worker.wake() }), endpointRoutes(endpointDeps)],
    adminRoutes,
    publicRoutes: [async (app) => publicKeyRoutes(app, { publicKeyPem: callbacks.signer.servicePublicKeyPem })],
  }
}
