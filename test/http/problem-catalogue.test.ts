// The problem catalogue (src/http/problem.ts) is the one list of problem codes (docs/api.md §6): every code
// thrown in src/ is in it, each answers the body clients have always been sent, and /openapi.json documents
// the problems of every route from it.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { HttpProblem, PROBLEMS, problem, problemBody, type ProblemCode } from '../../src/http/problem.ts'
import { startTestService, type TestService } from '../support/service.ts'

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  )

/** Every problem code src/ names: `problem('CODE'`, `new HttpProblem(status, 'CODE'`, and `['CODE', 'detail']` tables. */
function thrownCodes(): { file: string; code: string; status?: number }[] {
  const found: { file: string; code: string; status?: number }[] = []
  for (const file of sourceFiles('src')) {
    const text = readFileSync(file, 'utf8')
    for (const m of text.matchAll(/\bproblem\(\s*'([A-Z0-9_]+)'/g)) found.push({ file, code: m[1]! })
    for (const m of text.matchAll(/new HttpProblem\(\s*(\d+),\s*'([A-Z0-9_]+)'/g)) found.push({ file, code: m[2]!, status: Number(m[1]) })
    for (const m of text.matchAll(/\[\s*'([A-Z0-9_]+)',\s*'[^']*'\s*\]/g)) found.push({ file, code: m[1]! })
  }
  return found
}

/** The titles clients have been sent for each status (the reason phrases of RFC 9110). */
const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

describe('problem catalogue', () => {
  test('every code thrown in src/ is in the catalogue, at its status', () => {
    const found = thrownCodes()
    assert.ok(found.length >= 30, `found only ${found.length} problem sites: is the scan still right?`)
    for (const { file, code, status } of found) {
      const known = (PROBLEMS as Record<string, { status: number }>)[code]
      assert.ok(known, `${file}: ${code} is not in src/http/problem.ts`)
      if (status !== undefined) assert.equal(status, known.status, `${file}: ${code} thrown with ${status}, catalogued as ${known.status}`)
    }
    const outside = sourceFiles('src').filter(
      (file) => !file.endsWith(join('http', 'problem.ts')) && /new HttpProblem\(/.test(readFileSync(file, 'utf8')),
    )
    assert.deepEqual(outside, [], 'problems are built by name through the catalogue')
  })

  test('each code answers the body clients rely on: type from the code, title of the status', () => {
    for (const [code, { status, title }] of Object.entries(PROBLEMS)) {
      assert.equal(title, TITLES[status], `${code}: title of ${status}`)
      const errors = [{ path: 'amount', message: 'is required' }]
      const body = problemBody(problem(code as ProblemCode, 'the detail', { errors }))
      assert.equal(
        JSON.stringify(body),
        JSON.stringify({
          type: `urn:paywatch:problem:${code.toLowerCase().replace(/_/g, '-')}`,
          title,
          status,
          detail: 'the detail',
          code,
          errors,
        }),
      )
    }
    // A framework 4xx passed through keeps its own status and that status's title.
    assert.deepEqual(problemBody(problem('BAD_REQUEST', 'x', { status: 405 })), {
      type: 'urn:paywatch:problem:bad-request',
      title: 'Method Not Allowed',
      status: 405,
      detail: 'x',
      code: 'BAD_REQUEST',
    })
    // A problem built outside the catalogue still gets its status's title.
    assert.equal(problemBody(new HttpProblem(404, 'SOMETHING_NEW', 'x')).title, 'Not Found')
  })
})

describe('/openapi.json documents the problems of every route from the catalogue', () => {
  let service: TestService
  before(async () => {
    service = await startTestService({ background: false })
  })
  after(async () => {
    await service?.close()
  })

  type Responses = Record<
    string,
    { description?: string; content?: Record<string, { schema?: { properties?: { code?: { enum?: string[] } } } }> }
  >
  const codesOf = (responses: Responses, status: string): string[] | undefined =>
    responses[status]?.content?.['application/problem+json']?.schema?.properties?.code?.enum

  test('every error response is a problem whose codes are catalogued at that status', async () => {
    const doc = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { responses: Responses }>>
    }>()
    let documented = 0
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        // /readyz answers its report, not a problem, with 503 when not ready.
        const problems = Object.keys(operation.responses).filter((s) => /^[45]/.test(s) && !(path === '/readyz' && s === '503'))
        for (const status of problems) {
          const schema = operation.responses[status]?.content?.['application/problem+json']?.schema as
            | { $ref?: string; allOf?: { $ref: string }[] }
            | undefined
          // The problem body is described once (components/schemas/Problem); each answer refers to it.
          assert.equal(schema?.$ref ?? schema?.allOf?.[0]?.$ref, '#/components/schemas/Problem', `${method} ${path} ${status}`)
          // `4XX`: any other client problem of the catalogue.
          if (status === '4XX') continue
          const codes = codesOf(operation.responses, status)
          assert.ok(codes?.length, `${method} ${path} ${status} documents a problem with its codes`)
          for (const code of codes) {
            const known = (PROBLEMS as Record<string, { status: number }>)[code]
            assert.ok(known, `${method} ${path}: ${code} catalogued`)
            if (status !== '4XX') assert.equal(String(known.status), status, `${method} ${path}: ${code} under ${status}`)
          }
          documented++
        }
      }
    }
    assert.ok(documented > 50)
    const create = doc.paths['/v2/payments']!.post!.responses
    assert.deepEqual(codesOf(create, '409'), ['CONFLICT'])
    assert.deepEqual(codesOf(create, '503'), ['CHAIN_UNAVAILABLE'])
    assert.deepEqual(codesOf(create, '401'), ['UNAUTHORIZED'])
    assert.deepEqual(codesOf(create, '429'), ['RATE_LIMITED'])
    for (const code of ['VALIDATION_FAILED', 'UNSUPPORTED_BLOCKCHAIN', 'MALFORMED_JSON', 'UNSUPPORTED_API_VERSION']) {
      assert.ok(codesOf(create, '400')!.includes(code), `POST /v2/payments documents ${code}`)
    }
    assert.match(create['409']!.description!, /CONFLICT/)
    assert.ok(codesOf(doc.paths['/admin/accounts']!.get!.responses, '401')!.includes('UNAUTHORIZED'))
    assert.deepEqual(codesOf(doc.paths['/cable']!.get!.responses, '426'), ['UPGRADE_REQUIRED'])
  })
})
