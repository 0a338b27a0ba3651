import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'

/**
 * The dashboard's stylesheet and script, plain files in the package (no build step), read once. Their
 * URLs carry a hash of the content, so browsers may cache them for a long time and still get a new
 * version at once.
 */
const read = (name: string): string => readFileSync(new URL(`./static/${name}`, import.meta.url), 'utf8')

/** By file name, as a request names them: a Map, so `constructor` or `__proto__` is simply not an asset. */
export const ASSETS: ReadonlyMap<string, { body: string; type: string }> = new Map([
  ['dashboard.css', { body: read('dashboard.css'), type: 'text/css; charset=utf-8' }],
  ['dashboard.js', { body: read('dashboard.js'), type: 'text/javascript; charset=utf-8' }],
])

export const ASSET_VERSION = createHash('sha256')
  .update([...ASSETS.values()].map((asset) => asset.body).join('\0'))
  .digest('hex')
  .slice(0, 12)
