import type { Tracking } from '../domain/tracking.ts'
import { getAddress, isAddress } from 'viem'
import { html, type Html } from './html.ts'

/** A time as the operator reads it: ISO, UTC, to the second, in a <time> element. */
export function time(at: Date | null | undefined): Html {
  if (!at) return html`<span class="muted">—</span>`
  const iso = at.toISOString()
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')} UTC</time>`
}

/** Status as a badge: the word is always written out, colour only adds to it. */
export function statusBadge(status: Tracking['status'] | string): Html {
  return html`<span class="badge badge-${status}">${status}</span>`
}

/** A long hash or address, shortened on screen, whole in the title and for copying. */
export function shortHash(value: string | null | undefined): Html {
  if (!value) return html`<span class="muted">—</span>`
  if (value.length <= 20) return html`<code>${value}</code>`
  return html`<code title="${value}">${value.slice(0, 10)}…${value.slice(-6)}</code>`
}

/** Milliseconds as "85 ms" or "1.2 s". */
export const duration = (ms: number): string => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`)

/** An address as the API answers it (EIP-55 mixed case), shortened on screen like a hash. */
export function address(value: string | null | undefined): Html {
  return shortHash(value && isAddress(value, { strict: false }) ? getAddress(value.toLowerCase()) : value)
}

/** An amount with its token's unit ("2.5 USDC"); the bare amount when the symbol is unknown. */
export function amount(value: string, symbol: string | null | undefined): Html {
  // One element: in a narrow screen's stacked table each child of a cell is a grid item of its own.
  return html`<span class="amount">${value}${symbol ? html` <span class="unit">${symbol}</span>` : ''}</span>`
}

/** "1 confirmation", "12 confirmations". */
export const confirmations = (n: number): string => `${n} confirmation${n === 1 ? '' : 's'}`
