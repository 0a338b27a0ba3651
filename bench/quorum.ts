// npm run bench:quorum — bench/tracking.ts twice in one run, at BENCH_SIZES (default 100000) pending:
// quorum 1 over one provider, then quorum 2 over three providers (URLs of the same Anvil, so that the
// figures compare the work, not the providers). Prints both rows and the ratios: RPC calls per block
// (target: quorum 2 at most 2× quorum 1) and block processing p50 (target < 50 ms).
import { spawnSync } from 'node:child_process'

const sizes = process.env.BENCH_SIZES ?? '100000'
const blocks = process.env.BENCH_BLOCKS ?? '20'

function run(providers: number, quorum: number): string[] {
  const child = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=16', 'bench/tracking.ts'], {
    env: { ...process.env, BENCH_SIZES: sizes, BENCH_BLOCKS: blocks, BENCH_PROVIDERS: String(providers), BENCH_QUORUM: String(quorum) },
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  })
  if (child.status !== 0) throw new Error(`bench/tracking.ts failed:\n${child.stdout}\n${child.stderr}`)
  const rows = child.stdout.split('\n').filter((line) => /^\| [\d,]+ \|/.test(line))
  const row = rows.at(-1)
  if (!row) throw new Error(`no result row:\n${child.stdout}`)
  console.log(`quorum ${quorum} of ${providers}: ${row}`)
  return row
    .split('|')
    .map((cell) => cell.trim())
    .filter(Boolean)
}

const one = run(1, 1)
const two = run(3, 2)
// Columns of bench/tracking.ts: pending, pending now, RPC calls/block, DB queries/block, processing p50 …
const ratio = (column: number) => (Number(two[column]) / Number(one[column])).toFixed(2)
console.log(
  `quorum 2 of 3 vs quorum 1 at ${one[0]} pending: RPC calls/block ${one[2]} → ${two[2]} (×${ratio(2)}), ` +
    `processing p50 ${one[4]} → ${two[4]} ms (×${ratio(4)}), DB queries/block ×${ratio(3)}`,
)
