/**
 * Authentication. Every request's bearer key is resolved to a user in `onRequest`, before the body is
 * read, so that an anonymous write with a bad body is a 401 (CONTRACT §1 order of checks). The glue
 * security handler then checks the roles the spec lists as the operation's scopes. A key that was sent
 * and not accepted (unknown, revoked or malformed) counts against the address (`auth-throttle.ts`),
 * which is checked before the key is looked up.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { bearerKey } from '../lib/api-keys.js'
import type { Caller } from '../lib/rights.js'
import type { AuthThrottle } from './auth-throttle.js'
import { forbidden } from './errors.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, or null when anonymous (no key, or a key that is unknown or revoked). */
    user: Caller | null
  }
}

/**
 * `callerOf` finds the active user holding a key (undefined for an unknown or revoked key): at once when it knows
 * (a key verified before and unchanged since, repositories/users.ts `keyCallers`), else as a promise.
 */
export function registerAuthentication(
  app: FastifyInstance, callerOf: (key: string) => Caller | undefined | Promise<Caller | undefined>, throttle: AuthThrottle,
): void {
  app.decorateRequest('user', null)
  const settle = (req: FastifyRequest, caller: Caller | undefined): void => {
    req.user = caller ?? null
    if (req.user === null) throttle.failed(req)
  }
  // Called back: a request without credentials (every anonymous read) is let through at once, without a promise, and
  // so is one whose key is known at once.
  app.addHook('onRequest', (req, reply, done) => {
    const authorization = req.headers.authorization
    if (authorization === undefined) {
      req.user = null
      done()
      return
    }
    let caller: Caller | undefined | Promise<Caller | undefined>
    try {
      throttle.check(req, reply)
      const key = bearerKey(authorization)
      caller = key === undefined ? undefined : callerOf(key)
    } catch (error) {
      done(error as Error)
      return
    }
    if (caller instanceof Promise) {
      caller.then((found) => {
        settle(req, found)
        done()
      }, done)
      return
    }
    settle(req, caller)
    done()
  })
  // glue installs security as a preHandler, which runs after body parsing and validation: move it first.
  app.addHook('onRoute', (route) => {
    if (route.preHandler !== undefined && route.schema !== undefined && 'operationId' in route.schema) {
      const security = route.preHandler
      route.onRequest = [...asArray(route.onRequest), ...asArray(security)]
      delete route.preHandler
    }
  })
}

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}

/** glue `securityHandlers`: the key in the name is the spec's `securitySchemes` entry. */
export const securityHandlers = {
  /** Scopes are the roles allowed to call the operation; none means any valid key. */
  async bearerAuth(req: FastifyRequest, _reply: FastifyReply, scopes: string[]): Promise<void> {
    if (req.user === null) throw forbidden(401)
    if (scopes.length > 0 && !scopes.includes(req.user.role)) throw forbidden(403)
  },
}
