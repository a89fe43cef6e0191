import Fastify from 'fastify'

/**
 * The ceiling for GET /auth/verify: the same Fastify, the same logger level and the same kind of
 * response (a schema-compiled `{"valid":true}`), but no hooks, no plugins and no token check. What
 * the service loses against this is the price of its own work per request.
 */
const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'warn' } })

app.get(
  '/auth/verify',
  {
    schema: {
      response: {
        200: { type: 'object', properties: { valid: { type: 'boolean' } }, required: ['valid'], additionalProperties: false }
      }
    }
  },
  async () => ({ valid: true })
)

const address = await app.listen({ port: 0, host: '127.0.0.1' })
// The bench reads this line (the logger is quieter than info, so Fastify prints no address).
process.stdout.write(JSON.stringify({ listening: address }) + '\n')

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void app.close().then(() => process.exit(0)))
}
