// Paywatch dashboard: live updates of the page (server-sent events from /dashboard/events).
// The page works without this script; with it, a page whose <main> has data-live refreshes itself.
;(() => {
  const main = document.getElementById('main')
  const topic = main && main.dataset.live
  if (!topic || !('EventSource' in window)) return
  const source = new EventSource(`/dashboard/events?topic=${encodeURIComponent(topic)}`)
  let busy = false
  let again = false

  // Fetches the page again and swaps its main content; stops listening when the page is no longer live.
  async function refresh() {
    if (busy) {
      again = true
      return
    }
    busy = true
    try {
      const response = await fetch(location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      if (response.ok) {
        const next = new DOMParser().parseFromString(await response.text(), 'text/html').getElementById('main')
        if (next) {
          if (next.innerHTML !== main.innerHTML) main.innerHTML = next.innerHTML
          if (next.dataset.live !== topic) source.close()
        }
      }
    } catch {
      // offline for a moment: the next event tries again
    } finally {
      busy = false
      if (again) {
        again = false
        refresh()
      }
    }
  }

  // What changed between this page's rendering and the stream's start is fetched once it is open.
  let opened = false
  source.addEventListener('open', () => {
    if (!opened) refresh()
    opened = true
  })
  source.addEventListener('refresh', refresh)
  source.addEventListener('progress', (event) => {
    const progress = JSON.parse(event.data)
    const fields = document.querySelectorAll('[data-field="confirmations"], [data-field="timeline-confirmations"]')
    for (const field of fields) field.textContent = `${progress.passed} of ${progress.required}`
    // The first confirmation also adds steps (transaction seen) the page does not have yet.
    if (!document.querySelector('[data-field="timeline-confirmations"]')) refresh()
  })
})()
