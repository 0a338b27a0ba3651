// The baseline of bench/api.ts: a bare Fastify route doing one `pg` insert, no validation, no auth.
import Fastify from 'fastify'
import pg from 'pg'

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 })
await pool.query(`CREATE TABLE IF NOT EXISTS bench_bare (
  id text PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`)
const app = Fastify({ logger: false })
app.post('/bare', async (request, reply) => {
  const body = request.body as { secret_id: string }
  await pool.query('INSERT INTO bench_bare (id, body) VALUES ($1, $2)', [body.secret_id, JSON.stringify(body)])
  return reply.code(201).send({ id: body.secret_id })
})
const address = await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
console.log(JSON.stringify({ listening: address }))
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => pool.end())
    .then(() => process.exit(0))
})
