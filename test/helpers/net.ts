/**
 * A free TCP port on 127.0.0.1, for tests that run the server as a child process, and whether such a server has
 * read what its clients sent.
 */
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:net'

/** Asked of the system, then released for the server to take. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** One row of the kernel's TCP table: ports, state (hex, `01` established) and the bytes queued each way. */
interface TcpRow { local: number; remote: number; state: string; txQueue: number; rxQueue: number }

async function tcpRows(): Promise<TcpRow[]> {
  const rows: TcpRow[] = []
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '')
    for (const line of text.split('\n').slice(1)) {
      const [, local, remote, state, queues] = line.trim().split(/\s+/)
      if (local === undefined || remote === undefined || state === undefined || queues === undefined) continue
      const [tx, rx] = queues.split(':')
      rows.push({
        local: parseInt(local.slice(local.lastIndexOf(':') + 1), 16),
        remote: parseInt(remote.slice(remote.lastIndexOf(':') + 1), 16),
        state,
        txQueue: parseInt(tx ?? '0', 16),
        rxQueue: parseInt(rx ?? '0', 16),
      })
    }
  }
  return rows
}

/**
 * Resolves once the server process listening on `serverPort` has read every byte the clients on `clientPorts`
 * (local ports of connections to it, whose requests were written) sent it: nothing left in either side's
 * kernel queue (Linux's /proc/net/tcp). So what a server does with a request it has read (headers parsed,
 * in flight) can be tested without guessing how long delivery takes: the tables are read again every 2 ms, up
 * to `timeoutMs`.
 */
export async function readByServer(serverPort: number, clientPorts: readonly number[], timeoutMs = 15_000): Promise<void> {
  const clients = new Set(clientPorts)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const waiting = (await tcpRows()).filter((row) =>
      (row.local === serverPort && clients.has(row.remote) && row.rxQueue > 0)
      || (clients.has(row.local) && row.remote === serverPort && row.txQueue > 0))
    if (waiting.length === 0) return
    if (Date.now() > deadline) throw new Error(`the server on port ${serverPort} did not read what ${waiting.length} connections sent within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/** Resolves once nothing listens on `port` any more (its listening socket closed), looked at every 2 ms up to `timeoutMs`. */
export async function listenerClosed(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  // `0A`: TCP_LISTEN.
  while ((await tcpRows()).some((row) => row.local === port && row.state === '0A')) {
    if (Date.now() > deadline) throw new Error(`port ${port} still listened on after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}
