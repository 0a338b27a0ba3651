import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

// The docs name files and the code cites the docs' sections: both must stay true as code moves.

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  )
const docs = readdirSync('docs')
  .filter((name) => name.endsWith('.md'))
  .map((name) => join('docs', name))

test('every source file the docs and the README name exists', () => {
  const missing = [...docs, 'README.md'].flatMap((doc) =>
    [...readFileSync(doc, 'utf8').matchAll(/\b((?:src|test|bench)\/[\w./-]+\.ts)\b/g)]
      .map((m) => m[1]!)
      .filter((path) => !existsSync(path))
      .map((path) => `${doc}: ${path}`),
  )
  assert.deepEqual(missing, [])
})

test('every docs section the code cites exists', () => {
  const sections = new Set(docs.flatMap((doc) => [...readFileSync(doc, 'utf8').matchAll(/^#+ (§\d+)/gm)].map((m) => `${doc} ${m[1]}`)))
  assert.ok(sections.size >= 7, 'docs/api.md has its numbered sections')
  const cited = ['src', 'test', 'bench']
    .flatMap(files)
    .flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/(docs\/[\w-]+\.md) (§\d+)/g)].map((m) => ({ file, section: `${m[1]} ${m[2]}` })),
    )
  assert.ok(cited.length > 20, `the code cites the docs (${cited.length} citations)`)
  assert.deepEqual(
    cited.filter(({ section }) => !sections.has(section)).map(({ file, section }) => `${file}: ${section}`),
    [],
  )
})

test('no source comment cites a document outside the repository', () => {
  const outside = ['src', 'test', 'bench'].flatMap(files).filter((file) => /\b(decisions|interface)\.md\b/.test(readFileSync(file, 'utf8')))
  assert.deepEqual(outside, [])
})

test('README: the first code block is the two commands; npx paywatch dev comes right after; test:quick exists', () => {
  const readme = readFileSync('README.md', 'utf8')
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1]!
  assert.deepEqual(
    firstBlock
      .trim()
      .split('\n')
      .map((line) => line.split('#')[0]!.trim()),
    ['npm ci && npm start', 'npm ci && npm test'],
  )
  const after = readme.slice(readme.indexOf(firstBlock) + firstBlock.length)
  assert.match(after.split('\n## ')[0]!, /First thing to try:\*\* `npx paywatch dev`/)
  assert.match(after.split('\n## ')[0]!, /npm test` takes about \d+ minutes/)
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts
  assert.ok(scripts['test:quick'], 'npm run test:quick exists')
})
