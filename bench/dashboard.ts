// The dashboard's speed with a full database: 100,000 trackings (most completed over the last three
// hours, with their callback deliveries and attempts), one Anvil chain followed. Measures in Chromium
// the first paint of the overview and of a payment page (p50 of 20 loads each, target < 300 ms), and
// the server time of a search by secret_id (p50 of 50, target < 50 ms).
//
// Options (environment): DATABASE_URL (PostgreSQL server to create a scratch database on; without it
// the embedded database), BENCH_TRACKINGS (default 100000), BENCH_LOADS (default 20).
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import { startAnvil } from '../test/support/anvil.ts'
import { startEngineService } from '../test/engine/support.ts'
import { ADMIN_TOKEN } from '../test/support/service.ts'
import { chromiumMissing, listenOn, openBrowser, signIn } from '../test/dashboard/browser.ts'
import { forgetOwedChecks } from './bulk-pending.ts'

const trackings = Number(process.env.BENCH_TRACKINGS ?? 100_000)
const loads = Number(process.env.BENCH_LOADS ?? 20)
if (chromiumMissing) {
  console.error(chromiumMissing)
  process.exit(1)
}

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const ms = (value: number) => `${value.toFixed(1)} ms`

const anvil = await startAnvil()
const service = await startEngineService(anvil)
try {
  const { accountId } = await service.newAccount('bench')
  const db = service.database.db
  const seeding = performance.now()
  // One statement each: trackings spread over the last three hours (80 % success, 10 % failed, 10 % pending),
  // a delivery per completed one, an attempt per delivery.
  await sql`
    INSERT INTO trackings (id, account_id, secret_id, shape, blockchain, sender, nonce, receiver, token, decimals,
      commitment, confirmations, after_block, amount, transaction, callback, status, failed_reason, confirmed_at,
      created_at, updated_at)
    SELECT 'bench-' || i, ${accountId}, 'bench-secret-' || i, 'current', 'ethereum',
      '0x' || lpad(to_hex(i), 40, '0'), 0, '0x' || lpad(to_hex(i + 1), 40, '0'),
      '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', 18, 'confirmed', 1, 0, '1.5', '0x' || lpad(to_hex(i), 64, '0'),
      'https://shop.example/callback',
      CASE WHEN i % 10 = 0 THEN 'pending' WHEN i % 10 = 1 THEN 'failed' ELSE 'success' END,
      CASE WHEN i % 10 = 1 THEN 'AMOUNT_MISMATCH' END,
      CASE WHEN i % 10 > 1 THEN now() - (i % 10800) * interval '1 second' END,
      now() - (i % 10800) * interval '1 second' - interval '5 seconds',
      now() - (i % 10800) * interval '1 second'
    FROM generate_series(1, ${trackings}) AS i`.execute(db)
  await forgetOwedChecks(db)
  await sql`
    INSERT INTO deliveries (id, tracking_id, reason, state, attempts, next_attempt_at, created_at, updated_at, last_attempt_at, last_status_code, finished_at)
    SELECT 'd-' || id, id, 'completed', 'delivered', 1, updated_at, updated_at, updated_at, updated_at, 200, updated_at
    FROM trackings WHERE account_id = ${accountId} AND status <> 'pending'`.execute(db)
  await sql`
    INSERT INTO delivery_attempts (id, delivery_id, attempt, started_at, duration_ms, outcome, status_code, worker)
    SELECT 'a-' || id, id, 1, updated_at, 20 + (abs(hashtext(id)) % 400), 'delivered', 200, 'bench'
    FROM deliveries WHERE id LIKE 'd-bench-%'`.execute(db)
  await sql`ANALYZE`.execute(db)
  console.log(
    `bench:dashboard — ${trackings} trackings seeded in ${((performance.now() - seeding) / 1000).toFixed(1)} s, ${service.database.kind}`,
  )

  const baseUrl = await listenOn(service)
  const browser = await openBrowser()
  try {
    // The first overview after a start reads the whole chart window; later ones only the last minutes.
    const signedIn = await service.app.inject({
      method: 'POST',
      url: '/dashboard/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
    })
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!
    const cold = performance.now()
    await service.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie } })
    const coldMs = performance.now() - cold
    await signIn(browser.page, baseUrl)
    const firstPaint = async (url: string) => {
      const values: number[] = []
      for (let i = 0; i < loads; i++) {
        await browser.page.goto(url, { waitUntil: 'load' })
        // The paint entry may be recorded just after the load event.
        let paint: number | null = null
        while (paint === null) {
          paint = await browser.page.evaluate<number | null>(
            "performance.getEntriesByType('paint').find((entry) => entry.name === 'first-contentful-paint')?.startTime ?? null",
          )
        }
        values.push(paint)
      }
      return values
    }
    const overview = await firstPaint(`${baseUrl}/dashboard`)
    const payment = await firstPaint(`${baseUrl}/dashboard/payments/bench-secret-${Math.floor(trackings / 2) + 3}`)

    // Server time of a search: the request inside the service (no network, no browser), by secret_id.
    const searches: number[] = []
    for (let i = 0; i < 50; i++) {
      const secret = `bench-secret-${1 + Math.floor(Math.random() * trackings)}`
      const started = performance.now()
      const answer = await service.app.inject({ method: 'GET', url: `/dashboard/payments?q=${secret}`, headers: { cookie } })
      searches.push(performance.now() - started)
      if (answer.statusCode !== 200 || !answer.body.includes(secret)) throw new Error(`search for ${secret} did not find it`)
    }
    const list = performance.now()
    await service.app.inject({ method: 'GET', url: '/dashboard/payments?status=failed', headers: { cookie } })
    const listMs = performance.now() - list

    console.log('')
    console.log('| measurement | p50 | target |')
    console.log('|---|---:|---:|')
    console.log(`| overview first contentful paint (${loads} loads) | ${ms(p50(overview))} | < 300 ms |`)
    console.log(`| payment page first contentful paint (${loads} loads) | ${ms(p50(payment))} | < 300 ms |`)
    console.log(`| search by secret_id, server time (50 searches) | ${ms(p50(searches))} | < 50 ms |`)
    console.log(`| payment list filtered by status, server time (once) | ${ms(listMs)} | |`)
    console.log(`| first overview after start, server time (whole chart window read) | ${ms(coldMs)} | |`)
  } finally {
    await browser.close()
  }
} finally {
  await service.close()
  await anvil.stop()
}
