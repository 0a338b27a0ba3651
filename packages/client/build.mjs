// Builds the package to JavaScript with type declarations (docs/api.md, "Integrator kit"):
//   dist/      ES modules (`import`), from tsconfig.build.json
//   dist/cjs/  CommonJS (`require`, also on Node versions without require(esm)), from tsconfig.cjs.json
// Run by `npm ci` in the project (prepare) and by `npm pack` / `npm publish` (prepack). The build goes to a
// folder of its own first and then takes dist/'s place, so that code importing the package meanwhile (the
// project's own tests) never finds dist/ half written.
import { execFileSync } from 'node:child_process'
import { renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const building = `dist.${process.pid}`
for (const [project, outDir] of [
  ['tsconfig.build.json', building],
  ['tsconfig.cjs.json', `${building}/cjs`],
]) {
  execFileSync(process.execPath, [tsc, '-p', project, '--outDir', outDir], { cwd: here, stdio: 'inherit' })
}
// The package is "type": "module": this marks the files under dist/cjs (.js and .d.ts) as CommonJS.
writeFileSync(`${here}${building}/cjs/package.json`, '{ "type": "commonjs" }\n')
rmSync(`${here}dist`, { recursive: true, force: true })
renameSync(`${here}${building}`, `${here}dist`)
