/**
 * A free TCP port on 127.0.0.1, for tests that run the server as a child process.
 */
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
