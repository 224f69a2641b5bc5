/**
 * The database's bad moments, told apart from the application's own errors (CONTRACT §18). A connection
 * closed by the server or the network, PostgreSQL stopped, restarting or refusing connections (a database whose
 * connections an operator turned off among them), a pool with
 * no connection free within the timeout, a statement or a lock wait cut by `statement_timeout` or
 * `lock_timeout`, SQLite's busy timeout passed, a full disk, a file that may not be written or that was
 * deleted or replaced under the server: none of them is the request's fault nor a bug, and each passes
 * (the database comes back, the lock goes, space is made). A request meeting one is answered 503
 * `rest_database_unavailable` with `Retry-After` (the error handler asks `isDatabaseUnavailable`, given to
 * it by app.ts), and its unit of work was rolled back: the error came before the commit, or was the commit's.
 */

/** The database file the server opened is gone: deleted, or replaced by another file at its path. */
export class DatabaseFileLost extends Error {
  readonly code = 'SQLITE_FILE_LOST'
  readonly path: string
  constructor(path: string) {
    super(`the SQLite database file ${path} was deleted or replaced while the server ran; nothing more is written to it, restart the server to open the file now at that path`)
    this.path = path
  }
}

/**
 * PostgreSQL's SQLSTATEs of a database that cannot serve now: connection exceptions (class 08), operator
 * intervention (57: admin or crash shutdown, cannot connect now, a statement cancelled by its timeout),
 * insufficient resources (53: too many connections, disk full, out of memory), a lock not taken within
 * `lock_timeout` (55P03), a standby that cannot write (25006: read-only transaction after a failover).
 */
const POSTGRES_UNAVAILABLE = /^(08|57|53)|^55P03$|^25006$/

/**
 * A database that refuses new connections for a while (`ALTER DATABASE … ALLOW_CONNECTIONS false`, as an operator
 * sets for maintenance): SQLSTATE 55000, which PostgreSQL also gives for errors of the application's own (a
 * sequence's `currval` before `nextval`), so it is told by its message as well.
 */
const POSTGRES_REFUSING = { code: '55000', message: 'is not currently accepting connections' }

/** Node's socket errors, met when PostgreSQL cannot be reached. */
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED'])

/**
 * SQLite's result codes of a file that cannot serve now: busy past the busy timeout, full, read-only,
 * an I/O error, a file that cannot be opened (its extended codes begin with these).
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|PROTOCOL|NOMEM)/

/** pg's own messages, thrown without a code: a connection ended under a query, a pool with none to give. */
const PG_MESSAGES = [
  'Connection terminated', 'timeout exceeded when trying to connect', 'Client has encountered a connection error',
  'Connection is closed', 'Query read timeout', 'terminating connection',
]

/** Whether `error` says the database cannot serve now (503), not that the request or the code is wrong (4xx, 500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseFileLost) return true
  if (typeof error !== 'object' || error === null) return false
  const code = 'code' in error && typeof error.code === 'string' ? error.code : undefined
  if (code !== undefined) {
    if (SQLITE_UNAVAILABLE.test(code) || SOCKET_ERRORS.has(code)) return true
    if (/^[0-9A-Z]{5}$/.test(code) && POSTGRES_UNAVAILABLE.test(code)) return true
    if (code === POSTGRES_REFUSING.code && error instanceof Error && error.message.includes(POSTGRES_REFUSING.message)) return true
  }
  const message = error instanceof Error ? error.message : ''
  if (PG_MESSAGES.some((m) => message.includes(m))) return true
  // An error that came with another (a rollback failing after the statement's own failure).
  const cause = 'cause' in error ? error.cause : undefined
  if (cause !== undefined && cause !== error && isDatabaseUnavailable(cause)) return true
  // Errors carried by another (an AggregateError; the route layer's security error wrapping the key lookup's).
  const carried = 'errors' in error ? error.errors : undefined
  return Array.isArray(carried) && carried.some((e) => e !== error && isDatabaseUnavailable(e))
}

/** What the log says of a database fault: its code (`SQLITE_FULL`, `57P01`, `ECONNREFUSED`) and message. */
export function faultCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const code = 'code' in error && typeof error.code === 'string' ? error.code : undefined
  return code === undefined || error.message.startsWith(code) ? error.message : `${code}: ${error.message}`
}
