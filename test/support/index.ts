// One import for chain tests: `import { startAnvil, deployToken, ... } from "./index.ts"`.
export * from './anvil.ts'
export * from './compile.ts'
export * from './deploy.ts'
export * from './abis.ts'
