// Shared set-up of the dashboard tests: Debian's Chromium driven by playwright-core, the service
// listening on a real port, sign-in, and screenshots kept under test/.artifacts/dashboard (gitignored).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { ADMIN_TOKEN, type TestService } from '../support/service.ts'

export const CHROMIUM = '/usr/bin/chromium'
/** The reason the browser tests are skipped, or false when Chromium is there (.ci/run installs it). */
export const chromiumMissing: string | false = existsSync(CHROMIUM)
  ? false
  : `Chromium is not installed at ${CHROMIUM} (apt-get install -y chromium); the dashboard's browser tests need it`

export const ARTIFACTS = join(import.meta.dirname, '..', '.artifacts', 'dashboard')

export interface Browser {
  context: BrowserContext
  page: Page
  close(): Promise<void>
}

/** A fresh Chromium profile, headless, with nothing talking to the network but the page. */
export async function openBrowser(viewport = { width: 1280, height: 900 }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'paywatch-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  const page = context.pages()[0] ?? (await context.newPage())
  return {
    context,
    page,
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

/** Starts the service's HTTP server on a free port; returns its base URL. */
export async function listenOn(service: TestService): Promise<string> {
  await service.listen()
  const { port } = service.app.server.address() as AddressInfo
  return `http://127.0.0.1:${port}`
}

export async function signIn(page: Page, baseUrl: string, token = ADMIN_TOKEN): Promise<void> {
  await page.goto(`${baseUrl}/dashboard`)
  await page.getByLabel('Admin token').fill(token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${baseUrl}/dashboard`)
}

/** A full-page screenshot kept as a test artifact, to be looked at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true })
}
