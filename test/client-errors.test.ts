/**
 * Requests Node's HTTP parser refuses (CONTRACT §16, §10): raw UTF-8 in the URL, malformed headers,
 * headers over the size limit, slow headers. They never reach a route, yet each gets the contract's
 * error body and the common headers, over a real socket; an unknown `Expect` is ignored, not 417.
 */
import { connect, type Socket } from 'node:net'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import type { AddressInfo } from 'node:net'
import { API, build } from './helpers/build.js'
import { errorBodyProblems } from './helpers/contract.js'

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
  /** Whether the server closed the connection after answering. */
  closed: boolean
}

/** Sends `bytes` as they are and reads the answer until the server closes (or 3 s pass). */
function raw(port: number, bytes: Buffer | string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    let closed = false
    const finish = () => {
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString('utf8')
      const [head = '', ...rest] = text.split('\r\n\r\n')
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const colon = line.indexOf(':')
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), closed })
    }
    const timer = setTimeout(() => {
      socket.destroy()
      finish()
    }, 3000)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('end', () => {
      closed = true
      socket.end()
      finish()
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may close while a large request is still being written: the answer already arrived.
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') {
        closed = true
        finish()
      } else {
        clearTimeout(timer)
        reject(error)
      }
    })
    socket.write(bytes)
  })
}

async function listening(t: Test, language?: 'de') {
  const built = await build(t, language === undefined ? {} : { config: { defaultLanguage: language } })
  await built.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = built.app.server.address() as AddressInfo
  return { ...built, port }
}

function checkAnswer(t: Test, res: RawResponse, status: number, code: string, language = 'en'): void {
  t.equal(res.status, status, `status ${status}`)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.headers['access-control-allow-origin'], '*')
  t.match(res.headers['access-control-expose-headers'], /X-Total, X-Total-Pages, Link, ETag, Location/)
  t.equal(res.headers['content-language'], language)
  t.equal(res.headers.connection, 'close')
  t.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body), 'Content-Length is the body length')
  t.same(errorBodyProblems(res.body), [], 'the body is the contract Error')
  const body = JSON.parse(res.body) as { code: string; data: { status: number }; message: string }
  t.equal(body.code, code)
  t.equal(body.data.status, status)
  t.ok(res.closed, 'the server closes the connection')
}

t.test('raw UTF-8 in the URL: 400 rest_invalid_request saying to percent-encode', async (t) => {
  const { port } = await listening(t)
  const res = await raw(port, `GET ${API}/venues?search=z\u00fcrich HTTP/1.1\r\nHost: x\r\n\r\n`)
  checkAnswer(t, res, 400, 'rest_invalid_request')
  t.match(JSON.parse(res.body).message, /Percent-encode/)
  t.match(JSON.parse(res.body).message, /--data-urlencode/)
  // The same request encoded is answered normally.
  const encoded = await raw(port, `GET ${API}/venues?search=z%C3%BCrich HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
  t.equal(encoded.status, 200)
})

t.test('the answer is in the default language, with its Content-Language', async (t) => {
  const { port } = await listening(t, 'de')
  const res = await raw(port, `GET ${API}/events/by-slug/m\u00fcnchen HTTP/1.1\r\nHost: x\r\n\r\n`)
  checkAnswer(t, res, 400, 'rest_invalid_request', 'de')
  t.match(JSON.parse(res.body).message, /Prozentzeichen/)
})

t.test('malformed requests of every kind get the contract body', async (t) => {
  const { port } = await listening(t)
  const cases: Array<[string, string]> = [
    ['a control character in a header value', `GET ${API}/tags HTTP/1.1\r\nHost: x\r\nX-A: b\u0001c\r\n\r\n`],
    ['a header line without a colon', `GET ${API}/tags HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n`],
    ['Content-Length and Transfer-Encoding together', `POST ${API}/tags HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
    ['a bad chunk size', `POST ${API}/tags HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`],
    ['not HTTP at all', 'HELLO\r\n\r\n'],
    ['a space in the path', `GET ${API}/ta gs HTTP/1.1\r\nHost: x\r\n\r\n`],
  ]
  for (const [name, request] of cases) {
    t.test(name, async (t) => checkAnswer(t, await raw(port, request), 400, 'rest_invalid_request'))
  }
})

t.test('headers over the limit: 431 with the contract body', async (t) => {
  const { port } = await listening(t)
  const res = await raw(port, `GET ${API}/tags HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
  checkAnswer(t, res, 431, 'rest_request_header_fields_too_large')
  const url = await raw(port, `GET ${API}/tags?search=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
  checkAnswer(t, url, 431, 'rest_request_header_fields_too_large')
})

t.test('headers that time out: 408 with the contract body', async (t) => {
  const { app, port } = await listening(t)
  // Node checks header timeouts every 30 s by default; raise its own event at once instead.
  const accepted = new Promise<Socket>((resolve) => app.server.once('connection', resolve))
  const pending = raw(port, `GET ${API}/tags HTTP/1.1\r\nHost: x\r\n`)
  const serverSide = await accepted
  app.server.emit('clientError', Object.assign(new Error('Request Timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), serverSide)
  checkAnswer(t, await pending, 408, 'rest_request_timeout')
})

t.test('the key of a refused request is never echoed', async (t) => {
  const { port } = await listening(t)
  const res = await raw(port, `POST ${API}/tags?name=\u00e9 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer cek_secret_value\r\n\r\n`)
  t.equal(res.status, 400)
  t.notMatch(JSON.stringify(res), /cek_secret_value/)
})

t.test('an unknown Expect is ignored: the request is answered as usual', async (t) => {
  const { port } = await listening(t)
  const res = await raw(port, `GET ${API}/tags HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n`)
  t.equal(res.status, 200)
  t.equal(JSON.parse(res.body).total, 0)
})

t.test('any byte outside ASCII in the request target is refused the same way (property)', async (t) => {
  const { port } = await listening(t)
  let runs = 0
  await fc.assert(fc.asyncProperty(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((s) => /[^\x00-\x7f]/.test(s) && !/[\s\x00-\x1f]/.test(s)),
    fc.constantFrom('/venues?search=', '/events/by-slug/', '/tags?slug=', '/categories/'),
    async (text, where) => {
      runs++
      const res = await raw(port, Buffer.concat([Buffer.from(`GET ${API}${where}`), Buffer.from(text, 'utf8'), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]))
      return res.status === 400 && errorBodyProblems(res.body).length === 0 && JSON.parse(res.body).code === 'rest_invalid_request' &&
        res.headers['access-control-allow-origin'] === '*'
    },
  ), { numRuns: 40, seed: 18 })
  t.equal(runs, 40)
})

t.test('errors Node would answer before routing get the contract body too: no Host, CONNECT, a refusal after a pipelined request', async (t) => {
  const { port } = await listening(t)
  const noHost = await raw(port, `GET ${API}/tags HTTP/1.1\r\n\r\n`)
  checkAnswer(t, noHost, 400, 'rest_invalid_request')
  const tunnel = await raw(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
  checkAnswer(t, tunnel, 404, 'rest_no_route')
  // A valid request, then an oversized one on the same connection: the first is answered, then the 431.
  const both = await raw(port, `GET ${API}/tags HTTP/1.1\r\nHost: x\r\n\r\nGET ${API}/tags HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
  t.equal(both.status, 200, 'the first request is answered')
  const second = both.body.slice(both.body.indexOf('HTTP/1.1 '))
  t.match(second, /^HTTP\/1\.1 431 /, 'then the refusal')
  t.match(second, /"code":"rest_request_header_fields_too_large"/)
})
