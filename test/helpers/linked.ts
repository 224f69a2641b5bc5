/**
 * What the /venues and /organizers suites share: a fresh-app `setup` with the readers and writers each
 * uses, the error bodies they compare with, and the create tests whose rules are the same for both
 * (the record answered and read back, media types, the required name). Each suite calls
 * `linkedCreateTests` with its kind and adds what is its own.
 */
import t from 'tap'
import type { Test } from 'tap'
import { API, API_URL, build, type BuildOptions, type Injected } from './build.js'
import { expectError } from './errors.js'

type Headers = Record<string, string>

export interface LinkedKind<R> {
  collection: 'venues' | 'organizers'
  resource: 'venue' | 'organizer'
  /** The record's keys, in the reference's order. */
  keys: string[]
  /** The record the server must return for one created by user 1 at NOW. */
  record(id: number, name: string): R
  /** A name to create one with, and a body without the name (another field of the kind). */
  sample: string
  withoutName: Record<string, unknown>
  /** Names refused as 400 `rest_invalid_param` (besides those every kind refuses). */
  invalidNames: unknown[]
}

/** The paths, a fresh-app `setup`, the error bodies and the list readers of one collection. */
export function linkedTools<R>(kind: Pick<LinkedKind<R>, 'collection' | 'resource'>) {
  const PATH = `${API}/${kind.collection}`
  const URL = `${API_URL}/${kind.collection}`

  /** A fresh app whose first user (id 1) is an editor, with `create` asserting the 201. */
  async function setup(t: Test, options: BuildOptions = {}) {
    const built = await build(t, options)
    const editor = await built.auth('editor')
    async function create(body: Record<string, unknown>, headers: Headers = editor, query = ''): Promise<R> {
      const res = await built.inject({ method: 'POST', url: `${PATH}${query}`, headers, payload: body })
      t.equal(res.statusCode, 201, `created ${JSON.stringify(body)}`)
      return res.json<R>()
    }
    async function list(query: string, headers: Headers = {}): Promise<Injected> {
      return built.inject({ url: `${PATH}${query}`, headers })
    }
    async function read(id: number | string, headers: Headers = {}): Promise<Injected> {
      return built.inject({ url: `${PATH}/${id}`, headers })
    }
    async function patch(id: number | string, payload: Record<string, unknown>, headers: Headers = editor): Promise<Injected> {
      return built.inject({ method: 'PATCH', url: `${PATH}/${id}`, headers, payload })
    }
    return { ...built, editor, create, list, read, patch }
  }

  const errors = {
    FORBIDDEN_401: { code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 401 } },
    FORBIDDEN_403: { code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 403 } },
    NOT_ACCESSIBLE: { code: `${kind.resource}-not-accessible`, message: `The requested ${kind.resource} is not accessible.`, data: { status: 403 } },
    IN_TRASH: { code: `${kind.resource}-is-in-trash`, message: `The ${kind.resource} is already trashed.`, data: { status: 410 } },
  }
  const ids = (res: Injected): number[] => (res.json<Record<string, Array<{ id: number }>>>()[kind.collection] ?? []).map((r) => r.id)
  const restUrl = (res: Injected): string => res.json<{ rest_url: string }>().rest_url
  return { PATH, URL, setup, ...errors, ids, restUrl }
}

/** The create tests whose rules are the same for venues and organizers. */
export function linkedCreateTests<R>(kind: LinkedKind<R>): void {
  const { PATH, URL, setup } = linkedTools(kind)
  const name = kind.resource

  t.test('create: 201 with Location, a strong ETag and the whole record, every key present in order', async (t) => {
    const { inject, editor } = await setup(t)
    const res = await inject({ method: 'POST', url: PATH, headers: editor, payload: { [name]: kind.sample } })
    t.equal(res.statusCode, 201)
    t.equal(res.headers.location, `${URL}/1`)
    t.match(res.headers.etag, /^"[^"]+"$/)
    t.equal(res.headers['content-language'], 'en')
    t.strictSame(res.json(), kind.record(1, kind.sample))
    t.strictSame(Object.keys(res.json()), kind.keys, 'field order follows the reference')
    const read = await inject({ url: `${PATH}/1` })
    t.strictSame(read.json(), kind.record(1, kind.sample))
    t.equal(read.headers.etag, res.headers.etag, 'the same version, the same ETag')
  })

  t.test('create: other media types are 415, malformed JSON 400', async (t) => {
    const { inject, editor } = await setup(t)
    expectError(t, await inject({ method: 'POST', url: PATH, headers: { ...editor, 'content-type': 'text/plain' }, payload: `${name}=Name` }), 415, 'rest_unsupported_media_type')
    expectError(t, await inject({ method: 'POST', url: PATH, headers: { ...editor, 'content-type': 'application/json' }, payload: `{"${name}":` }), 400, 'rest_invalid_json')
  })

  t.test(`create: ${name} is required (rest_missing_callback_param), an empty name is 400; nothing is created`, async (t) => {
    const { inject, editor, list } = await setup(t)
    const missing = await inject({ method: 'POST', url: PATH, headers: editor, payload: kind.withoutName })
    expectError(t, missing, 400, 'rest_missing_callback_param')
    t.strictSame(missing.json().data.params, [name], 'data.params lists the missing field')
    t.equal(missing.json().message, `Missing parameter(s): ${name}.`)
    expectError(t, await inject({ method: 'POST', url: PATH, headers: editor }), 400, 'rest_missing_callback_param', [name])
    for (const value of ['', null, ...kind.invalidNames]) {
      expectError(t, await inject({ method: 'POST', url: PATH, headers: editor, payload: { [name]: value } }), 400, 'rest_invalid_param', [name])
    }
    t.equal((await list('', editor)).json().total, 0)
  })
}
