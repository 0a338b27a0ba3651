/** A clock tests move by hand. */
export function manualClock(start = new Date('2026-01-01T00:00:00.000Z')) {
  let now = start.getTime()
  const clock = () => new Date(now)
  return Object.assign(clock, {
    advance(ms: number) {
      now += ms
    },
    set(date: Date) {
      now = date.getTime()
    },
  })
}
