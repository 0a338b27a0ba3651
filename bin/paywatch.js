#!/usr/bin/env node
// Paywatch runs on the Node.js 24 the project installs (npm package `node`); started by an older
// Node, this launcher hands over to it.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url))
const major = Number(process.versions.node.split('.')[0])
if (major >= 24) {
  await import(main)
} else {
  const node24 = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url))
  if (!existsSync(node24)) {
    console.error('paywatch needs Node.js 24: run `npm ci` in the project first')
    process.exit(1)
  }
  const result = spawnSync(node24, [main, ...process.argv.slice(2)], { stdio: 'inherit' })
  process.exit(result.status ?? 1)
}
