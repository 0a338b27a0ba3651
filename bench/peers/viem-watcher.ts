// The peer "50-line viem watcher" of bench:peers: watchContractEvent over a WebSocket on the token's
// Transfer logs; a transfer to an expected receiver is POSTed to the receiver at once. Expected
// receivers: one lowercase address per line of PEERS_EXPECTED. Started by bench/peers.ts.
import { readFileSync } from 'node:fs'
import { createPublicClient, parseAbi, webSocket, type Address } from 'viem'

const expected = new Set(readFileSync(process.env.PEERS_EXPECTED!, 'utf8').split('\n').filter(Boolean))
const notifyUrl = process.env.PEERS_NOTIFY_URL!
const client = createPublicClient({ transport: webSocket(process.env.PEERS_WS_URL!, { keepAlive: true, reconnect: true }) })
const abi = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)'])

client.watchContractEvent({
  address: process.env.PEERS_TOKEN as Address,
  abi,
  eventName: 'Transfer',
  onLogs(logs) {
    for (const log of logs) {
      const to = log.args.to!.toLowerCase()
      if (!expected.has(to)) continue
      void fetch(notifyUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ receiver: to, transaction: log.transactionHash, value: String(log.args.value) }),
      }).then((response) => response.arrayBuffer())
    }
  },
  onError(error) {
    console.error(error)
  },
})
// bench/service-child.ts waits for this line.
console.log(JSON.stringify({ listening: 'viem' }))
process.on('SIGTERM', () => process.exit(0))
