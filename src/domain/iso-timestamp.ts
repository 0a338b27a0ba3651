/**
 * Reads an ISO 8601 timestamp as clients send it in a query (`after`): a date, or a date and time with
 * optional seconds and fraction, and an offset (`Z`, `±HH`, `±HH:MM`, `±HHMM`; none means UTC).
 * An unencoded `+` in a query string arrives as a space, so ` HH:MM` is read as `+HH:MM`.
 * Returns the instant, or undefined when the text is not such a timestamp or names no real date.
 * Digits beyond milliseconds are cut off: stored times are whole milliseconds, so "strictly after"
 * gives the same answer.
 */
export function parseIsoTimestamp(text: string): Date | undefined {
  const match = pattern.exec(text)
  if (!match) return undefined
  const [, y, mo, d, h = '00', mi = '00', s = '00', fraction = '', offset = 'Z'] = match
  const year = Number(y),
    month = Number(mo),
    day = Number(d),
    hour = Number(h),
    minute = Number(mi),
    second = Number(s)
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined
  if (hour > 24 || minute > 59 || second > 59) return undefined
  if (hour === 24 && (minute !== 0 || second !== 0 || /[1-9]/.test(fraction))) return undefined
  const millis = Number(fraction.slice(0, 3).padEnd(3, '0'))
  let offsetMinutes = 0
  if (offset !== 'Z' && offset !== 'z') {
    const sign = offset.startsWith('-') ? -1 : 1
    const digits = offset.slice(1).replace(':', '')
    const oh = Number(digits.slice(0, 2)),
      om = Number(digits.slice(2) || '0')
    if (oh > 23 || om > 59) return undefined
    offsetMinutes = sign * (oh * 60 + om)
  }
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 to 1900–1999.
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, millis)
  date.setTime(date.getTime() - offsetMinutes * 60_000)
  return Number.isNaN(date.getTime()) ? undefined : date
}

const pattern = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+\- ]\d{2}(?::?\d{2})?)?)?$/

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}
