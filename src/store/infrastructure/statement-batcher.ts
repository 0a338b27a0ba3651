export interface StatementBatcher<Input, Output> {
  /** The outcome for one input, as the single-item operation gives it. */
  run(input: Input): Promise<Output>
}

interface Waiting<Input, Output> {
  input: Input
  resolve: (output: Output) => void
  reject: (error: unknown) => void
}

/**
 * Runs the statements of concurrent requests together (group commit for writes): one statement runs at
 * a time, and the requests that arrive meanwhile go into the next. A lone request is sent on the next
 * turn of the event loop, so nothing waits for a timer; under load, one statement, one round trip and
 * (for a write) one commit serve many rows. Measured with pgbench on the trackings table: 10-row inserts
 * cost PostgreSQL about a quarter of the CPU per row of single-row ones; the service saves a query's
 * own cost (pool, driver, protocol) for all but one of them.
 *
 * A batch that fails is run again item by item, so no request fails because of another. A batch can fail
 * where single items would not: a row the database refuses, or two write batches holding the same keys
 * in opposite orders (a deadlock; on other nodes, or an integrator sending the same payments twice at once).
 */
export function createStatementBatcher<Input, Output>(options: {
  /** The outputs of several inputs, in their order, from one statement. */
  many: (inputs: Input[]) => Promise<Output[]>
  /** The output of one input. */
  one: (input: Input) => Promise<Output>
  maxBatch: number
}): StatementBatcher<Input, Output> {
  const queue: Waiting<Input, Output>[] = []
  let running = false

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, options.maxBatch)
      if (batch.length > 1) {
        try {
          const outputs = await options.many(batch.map((waiting) => waiting.input))
          batch.forEach((waiting, i) => waiting.resolve(outputs[i]!))
          continue
        } catch {
          // Item by item below: each request gets its own outcome.
        }
      }
      for (const waiting of batch) {
        try {
          waiting.resolve(await options.one(waiting.input))
        } catch (error) {
          waiting.reject(error)
        }
      }
    }
    running = false
  }

  return {
    run(input) {
      return new Promise((resolve, reject) => {
        queue.push({ input, resolve, reject })
        if (running) return
        running = true
        // Next turn of the event loop: the requests read in this one join the batch.
        setImmediate(() => void drain())
      })
    },
  }
}
