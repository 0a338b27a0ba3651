// Builds the package to JavaScript with type declarations (docs/api.md, "Integrator kit"):
//   dist/      ES modules (`import`), from tsconfig.build.json
//   dist/cjs/  CommonJS (`require`, also on Node versions without require(esm)), from tsconfig.cjs.json
// Run by `npm ci` in the project (prepare) and by `npm pack` / `npm publish` (prepack).
import { execFileSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
rmSync(new URL('dist', import.meta.url), { recursive: true, force: true })
for (const project of ['tsconfig.build.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', project], { cwd: here, stdio: 'inherit' })
}
// The package is "type": "module": this marks the files under dist/cjs (.js and .d.ts) as CommonJS.
writeFileSync(new URL('dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n')
