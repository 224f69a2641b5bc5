/**
 * Error answers as the contract writes them (CONTRACT §10): one assertion helper for every suite.
 */
import type { Test } from 'tap'
import type { Injected } from './build.js'

export interface ErrorBody {
  code: string
  message: string
  data: { status: number; params?: Record<string, string> | string[]; details?: unknown[] }
}

/** Asserts an error answer: status, code, data.status, a message, and (when given) the fields named. */
export function expectError(t: Test, res: Injected, status: number, code: string, params?: string[]): ErrorBody {
  t.equal(res.statusCode, status, `status ${status} ${code}`)
  const body = res.json<ErrorBody>()
  t.equal(body.code, code, `code ${code}`)
  t.equal(body.data.status, status)
  t.type(body.message, 'string')
  if (params !== undefined) {
    const named = Array.isArray(body.data.params) ? body.data.params : Object.keys(body.data.params ?? {})
    t.same(named, params, 'data.params names the fields')
  }
  return body
}
