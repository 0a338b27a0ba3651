/** The /docs page under Paywatch's name: page title and a text logo instead of the stock Swagger ones. */
const logo = `<svg xmlns="http://www.w3.org/2000/svg" width="180" height="40" viewBox="0 0 180 40"><text x="0" y="29" font-family="system-ui, sans-serif" font-size="26" font-weight="700" fill="#ffffff">Paywatch</text></svg>`

export const docsPage = {
  theme: { title: 'Paywatch API' },
  logo: { type: 'image/svg+xml', content: Buffer.from(logo), href: '/docs', target: '_self' as const },
}
