import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { describe, test } from 'node:test'
import ts from 'typescript'

/**
 * The layer map of docs/architecture.md, lowest first. A module may import from its own folder and
 * from any lower layer; never upward, and never sideways into another folder of its own layer (two
 * subsystems talk through a lower layer: the tracking event bus, a store module, a domain type).
 */
const LAYERS: string[][] = [
  ['domain'],
  ['config'],
  ['common'],
  ['store', 'chain'],
  ['payments', 'engine', 'callbacks', 'admin'],
  ['http'],
  ['cable', 'dashboard'],
  ['service.ts'],
  ['cli'],
]

/** Packages each low layer may use: the domain stays pure (no HTTP, no storage, no logging). */
const PACKAGES_ALLOWED: Record<string, RegExp> = {
  domain: /^viem$/,
  config: /^(viem|node:.*)$/,
}

const SRC = 'src'

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  )
}

interface Edge {
  from: string
  to: string
}

/** Every import of a file: static, type-only, re-exports and dynamic `import()`. */
function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((imported) => imported.fileName)
}

function moduleGraph(files: string[]): { edges: Edge[]; packages: { from: string; name: string }[] } {
  const edges: Edge[] = []
  const packages: { from: string; name: string }[] = []
  for (const file of files) {
    for (const specifier of importsOf(file)) {
      if (specifier.startsWith('.')) edges.push({ from: file, to: normalize(join(dirname(file), specifier)) })
      else packages.push({ from: file, name: specifier })
    }
  }
  return { edges, packages }
}

/** `src/engine/verdicts.ts` → `engine`; `src/service.ts` → `service.ts`. */
const unitOf = (file: string): string => relative(SRC, file).split('/')[0]!
const layerOf = (unit: string): number => LAYERS.findIndex((layer) => layer.includes(unit))

/** What is wrong with one import, or undefined when it follows the layer map. */
export function layerViolation(from: string, to: string): string | undefined {
  const [a, b] = [unitOf(from), unitOf(to)]
  if (a === b) return undefined
  const [la, lb] = [layerOf(a), layerOf(b)]
  if (la < 0) return `${a} is not in the layer map`
  if (lb < 0) return `${b} is not in the layer map`
  if (lb > la) return `${a} (layer ${la}) imports upward from ${b} (layer ${lb})`
  if (lb === la) return `${a} imports sideways from ${b} (same layer)`
  return undefined
}

/** The import cycles between modules, each as the path that closes it. */
export function findCycles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>()
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to])
  const state = new Map<string, 'open' | 'done'>()
  const cycles: string[][] = []
  const stack: string[] = []
  const visit = (node: string): void => {
    state.set(node, 'open')
    stack.push(node)
    for (const target of next.get(node) ?? []) {
      if (state.get(target) === 'open') cycles.push([...stack.slice(stack.indexOf(target)), target])
      else if (!state.has(target)) visit(target)
    }
    stack.pop()
    state.set(node, 'done')
  }
  for (const node of next.keys()) if (!state.has(node)) visit(node)
  return cycles
}

describe('architecture', () => {
  const files = sourceFiles(SRC)
  const { edges, packages } = moduleGraph(files)

  test('every folder of src/ is placed in the layer map', () => {
    const units = new Set(files.map(unitOf))
    assert.deepEqual(
      [...units].filter((unit) => layerOf(unit) < 0),
      [],
    )
    assert.ok(edges.length > 300, `the import graph was read (${edges.length} imports)`)
  })

  test('no import runs upward or sideways', () => {
    const violations = edges.flatMap(({ from, to }) => {
      const problem = layerViolation(from, to)
      return problem ? [`${from} -> ${to}: ${problem}`] : []
    })
    assert.deepEqual(violations, [])
  })

  test('the domain and config layers use only the packages allowed to them', () => {
    const violations = packages
      .filter(({ from, name }) => {
        const allowed = PACKAGES_ALLOWED[unitOf(from)]
        return allowed !== undefined && !allowed.test(name)
      })
      .map(({ from, name }) => `${from} imports ${name}`)
    assert.deepEqual(violations, [])
  })

  test('no import cycle', () => {
    assert.deepEqual(
      findCycles(edges).map((cycle) => cycle.join(' -> ')),
      [],
    )
  })

  test('the checks catch what they are for', () => {
    // An upward import (the chain adapters reaching into the engine), a sideways one and a cycle.
    assert.match(layerViolation('src/chain/rpc-client.ts', 'src/engine/chain-engine.ts')!, /upward/)
    assert.match(layerViolation('src/store/trackings.ts', 'src/chain/registry.ts')!, /sideways/)
    assert.equal(layerViolation('src/http/app.ts', 'src/store/infrastructure/database.ts'), undefined)
    assert.deepEqual(
      findCycles([
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
        { from: 'c', to: 'a' },
      ]),
      [['a', 'b', 'c', 'a']],
    )
  })
})
