// The block follower and processor on their own, over Anvil as `ethereum` (no service, no HTTP): for the
// engine tests that watch what a block does to the database, statement by statement or log line by line.
import pino, { type Logger } from 'pino'
import type { PublicClient } from 'viem'
import { createChainReader } from '../../src/chain/chain-reader.ts'
import { createEvidenceReader, type EvidenceReader } from '../../src/chain/payment-evidence.ts'
import { createRpcClient } from '../../src/chain/rpc-client.ts'
import { createMetrics } from '../../src/common/metrics.ts'
import { createTrackingEvents, type TrackingEvents } from '../../src/common/tracking-events.ts'
import { builtInChains } from '../../src/config/chains.ts'
import { createReceiptSource } from '../../src/engine/block-evidence.ts'
import { createBlockFollower } from '../../src/engine/block-follower.ts'
import { createChainProcessor } from '../../src/engine/chain-processor.ts'
import { createEngineMetrics } from '../../src/engine/engine-metrics.ts'
import { createSuccessWatcher } from '../../src/engine/success-watch.ts'
import { createVerdicts } from '../../src/engine/verdicts.ts'
import type { Db } from '../../src/store/infrastructure/database.ts'
import type { Anvil } from '../support/index.ts'

/** A follower of `anvil` writing to `db`; `evidence` wraps the real evidence reader (default: the real one). */
export function followAnvil(
  anvil: Anvil,
  db: Db,
  options: { logger?: Logger; events?: TrackingEvents; evidence?: (client: PublicClient) => EvidenceReader } = {},
) {
  const chain = { ...builtInChains().ethereum!, chainId: anvil.chainId, rpc: [anvil.rpcUrl], pollingIntervalMs: 20, rpcTimeoutMs: 2_000 }
  const client = createRpcClient(chain, { retryRounds: 0 })
  const reader = createChainReader(client)
  const logger = options.logger ?? pino({ level: 'silent' })
  const events = options.events ?? createTrackingEvents()
  const metrics = createEngineMetrics(createMetrics().registry, {
    now: () => new Date(),
    chains: ['ethereum'],
    countPending: async () => new Map(),
  })
  const verdicts = createVerdicts({
    chain: 'ethereum',
    db,
    events,
    clock: () => new Date(),
    logger,
    metrics,
    isCanonical: async () => true,
  })
  const processor = createChainProcessor({
    chain: 'ethereum',
    db,
    evidence: options.evidence?.(client) ?? createEvidenceReader(client),
    receipts: createReceiptSource(reader),
    verdicts,
    metrics,
    logger,
    clock: () => new Date(),
    successes: createSuccessWatcher({ chain: 'ethereum', db, events, logger, metrics }),
  })
  const follower = createBlockFollower({ chain, reader, db, logger, sink: (event, window) => processor.handle(event, undefined, window) })
  return { client, follower }
}
