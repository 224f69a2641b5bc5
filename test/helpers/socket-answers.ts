/**
 * Reads over a real socket (the replay answers only requests that arrive on one; `app.inject` passes it by), each
 * answer with its headers as on the wire, in order, but those made anew on every request (Date, X-Request-Id), so
 * that two answers can be compared header by header and byte by byte.
 */
import { request, Agent } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'

/** Headers made anew on every request, whatever answers it. */
const PER_REQUEST = new Set(['date', 'x-request-id'])

export interface Answer {
  status: number
  /** Names and values as on the wire, in order (Date and X-Request-Id left out). */
  headers: string[]
  id: string
  body: Buffer
}

export type Get = (path: string, headers?: Record<string, string>) => Promise<Answer>

/** Starts `app` listening on a free port and gives a GET over one kept-alive socket. */
export async function listenAndGet(t: Test, app: FastifyInstance): Promise<Get> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  return (path, headers = {}) => new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const raw = res.rawHeaders
        const kept: string[] = []
        for (let i = 0; i < raw.length; i += 2) if (!PER_REQUEST.has(String(raw[i]).toLowerCase())) kept.push(String(raw[i]), String(raw[i + 1]))
        resolve({ status: res.statusCode ?? 0, headers: kept, id: String(res.headers['x-request-id']), body: Buffer.concat(chunks) })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}
