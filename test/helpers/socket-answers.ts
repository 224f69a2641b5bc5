/**
 * Reads over a real socket (the replay answers only requests that arrive on one; `app.inject` passes it by), each
 * answer with its headers as on the wire, in order, but those made anew on every request (Date, X-Request-Id), so
 * that two answers can be compared header by header and byte by byte.
 */
import { once } from 'node:events'
import { request, Agent } from 'node:http'
import { connect } from 'node:net'
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

/** Requests `paths` written in one go on one socket (pipelined: parsed in one turn of the event loop), their answers in order. */
export async function pipelined(port: number, paths: readonly string[]): Promise<Array<{ status: number; body: string }>> {
  const socket = connect({ host: '127.0.0.1', port })
  await once(socket, 'connect')
  socket.write(paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).join(''))
  let buffer = Buffer.alloc(0)
  const answers: Array<{ status: number; body: string }> = []
  for await (const chunk of socket as AsyncIterable<Buffer>) {
    buffer = Buffer.concat([buffer, chunk])
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n')
      if (end < 0) break
      const head = buffer.subarray(0, end).toString('latin1')
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
      if (buffer.length < end + 4 + length) break
      answers.push({ status: Number(head.split(' ')[1]), body: buffer.subarray(end + 4, end + 4 + length).toString('utf8') })
      buffer = buffer.subarray(end + 4 + length)
    }
    if (answers.length === paths.length) break
  }
  socket.destroy()
  return answers
}

/** Headers that leave a read to the full path: neither the replay nor a cold read takes a conditional request. */
export const FULL = { 'if-none-match': '"none"' }

/**
 * A read of `path` and the full path's answer to it (FULL): equal header by header and byte by byte, each with a request
 * id of its own; `taken`: whether the count `counted` reads went up by one with the read (the replay's cold reads, cold
 * lists).
 */
export async function sameAsFull(
  t: Test, wire: Get, counted: () => number, path: string, headers: Record<string, string>, label: string,
): Promise<{ taken: boolean; answer: Answer }> {
  const before = counted()
  const answer = await wire(path, headers)
  const taken = counted() === before + 1
  const full = await wire(path, { ...headers, ...FULL })
  t.equal(answer.status, full.status, `${label}: the status`)
  t.strictSame(answer.headers, full.headers, `${label}: every header the same, in the same order`)
  t.equal(answer.body.toString('base64'), full.body.toString('base64'), `${label}: the same bytes`)
  if (headers['x-request-id'] === undefined) t.not(answer.id, full.id, `${label}: a request id of its own`)
  return { taken, answer }
}

/** Header forms of a plain anonymous read that the replay and the cold paths take, each answered as the full path would. */
export const PLAIN_READ_VARIANTS: ReadonlyArray<Record<string, string>> = [
  {},
  { accept: 'application/json' },
  { 'accept-encoding': 'gzip', 'x-no-compression': '1' },
  { origin: 'https://widget.example', 'accept-language': 'de', 'user-agent': 'probe' },
  { 'x-request-id': 'probe-17' },
]
