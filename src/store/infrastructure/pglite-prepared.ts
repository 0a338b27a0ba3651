import { parse, protocol, type PGlite } from '@electric-sql/pglite'

const wire = protocol.serialize

const joined = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((length, part) => length + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

export interface PGlitePrepared {
  /** Runs the statement `text` prepared as `name` (prepared on first use) with `params`; its rows parsed with `parsers`. */
  run(
    name: string,
    text: string,
    params: readonly unknown[],
    parsers: Record<number, (value: string) => unknown>,
  ): Promise<{ rows: unknown[]; affectedRows?: number }>
  /** Forgets every prepared statement (a schema change outdated them); new ones take new names. */
  forget(): void
}

/**
 * Named prepared statements on PGlite, which its `query` does not offer: every `query` parses, analyses and
 * plans its text again and crosses into the WebAssembly backend six times (Parse, Describe, Bind, Describe,
 * Execute, Sync). A statement prepared here is parsed and described once; each run is one crossing with
 * Bind, Describe, Execute and Sync, and PostgreSQL may keep its plan (a generic plan once it costs no more
 * than the custom ones, as on a server). Values are serialized and rows parsed as `query` does.
 */
export function createPGlitePrepared(pglite: PGlite): PGlitePrepared {
  /** The parameter types of each prepared statement, from its Describe. */
  const types = new Map<string, number[]>()
  return {
    async run(name, text, params, parsers) {
      let paramTypes = types.get(name)
      if (!paramTypes) {
        const described = await pglite.execProtocol(joined([wire.parse({ name, text }), wire.describe({ type: 'S', name }), wire.sync()]))
        paramTypes = parse.parseDescribeStatementResults(described.messages)
        types.set(name, paramTypes)
      }
      const values = params.map((value, k) => {
        if (value === null || value === undefined) return null
        const serializer = pglite.serializers[paramTypes![k]!]
        return serializer ? serializer(value) : String(value)
      })
      const result = await pglite.execProtocol(
        joined([wire.bind({ statement: name, values }), wire.describe({ type: 'P' }), wire.execute({}), wire.sync()]),
      )
      return parse.parseResults(result.messages, pglite.parsers, { parsers })[0]!
    },
    forget() {
      types.clear()
    },
  }
}
