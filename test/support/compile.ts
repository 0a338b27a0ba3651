// Compiles the Solidity fixtures in test/support/contracts with npm `solc` (standard JSON).
//
// solc-js is slow to load (a large wasm blob) and OpenZeppelin's ERC-20 takes seconds to
// compile, so results are cached in test/.cache/ keyed by a hash of everything that affects
// the output (our sources, solc version, OpenZeppelin version, compiler settings). A warm run
// never even loads solc. The cache file is written atomically (tmp + rename) because several
// test processes may compile at the same time.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Abi, Hex } from 'viem'

export type ContractName = 'TestToken' | 'RevertingToken' | 'PaymentRouter' | 'Multicall3'

export interface Artifact {
  abi: Abi
  /** Creation bytecode, 0x-prefixed. */
  bytecode: Hex
  /** Runtime bytecode, 0x-prefixed (e.g. for anvil_setCode). */
  deployedBytecode: Hex
}

export type Artifacts = Record<ContractName, Artifact>

const here = dirname(fileURLToPath(import.meta.url))
const contractsDir = join(here, 'contracts')
const cacheDir = join(here, '..', '.cache')
const require = createRequire(import.meta.url)

// "cancun" is supported by both solc 0.8.x and anvil's default (latest) hardfork; pinning it
// keeps bytecode stable if either tool's default moves on.
const SETTINGS = {
  evmVersion: 'cancun',
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
} as const

function packageVersion(pkg: string): string {
  return (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version
}

function readSources(): Record<string, { content: string }> {
  const sources: Record<string, { content: string }> = {}
  for (const file of readdirSync(contractsDir)
    .filter((f) => f.endsWith('.sol'))
    .sort()) {
    sources[file] = { content: readFileSync(join(contractsDir, file), 'utf8') }
  }
  return sources
}

/** Resolves `@openzeppelin/contracts/...` (or any package path) imports from node_modules. */
function findImport(path: string): { contents: string } | { error: string } {
  try {
    return { contents: readFileSync(require.resolve(path), 'utf8') }
  } catch (e) {
    return { error: `cannot resolve import ${path}: ${String(e)}` }
  }
}

let memo: Promise<Artifacts> | undefined

/** Compiled artifacts for all fixture contracts (cached on disk and in memory). */
export function compileContracts(): Promise<Artifacts> {
  memo ??= compile()
  return memo
}

/** Convenience: one contract's artifact. */
export async function getArtifact(name: ContractName): Promise<Artifact> {
  return (await compileContracts())[name]
}

async function compile(): Promise<Artifacts> {
  const sources = readSources()
  const hash = createHash('sha256')
    .update(
      JSON.stringify({
        solc: packageVersion('solc'),
        oz: packageVersion('@openzeppelin/contracts'),
        settings: SETTINGS,
        sources,
      }),
    )
    .digest('hex')
    .slice(0, 16)
  const cacheFile = join(cacheDir, `contracts-${hash}.json`)

  try {
    return JSON.parse(readFileSync(cacheFile, 'utf8')) as Artifacts
  } catch {
    // cache miss (or a corrupt file): compile below
  }

  const solc = (await import('solc')).default
  const input = { language: 'Solidity', sources, settings: SETTINGS }
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as SolcOutput

  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) {
    throw new Error(`solc compilation failed:\n${errors.map((e) => e.formattedMessage ?? e.message).join('\n')}`)
  }

  const artifacts: Partial<Artifacts> = {}
  for (const [file, contracts] of Object.entries(output.contracts ?? {})) {
    if (!(file in sources)) continue // skip imported library contracts
    for (const [name, c] of Object.entries(contracts)) {
      artifacts[name as ContractName] = {
        abi: c.abi,
        bytecode: `0x${c.evm.bytecode.object}`,
        deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
      }
    }
  }

  mkdirSync(cacheDir, { recursive: true })
  const tmp = `${cacheFile}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(artifacts))
  renameSync(tmp, cacheFile)
  return artifacts as Artifacts
}

interface SolcOutput {
  errors?: Array<{ severity: string; message: string; formattedMessage?: string }>
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>
}
