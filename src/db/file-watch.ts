/**
 * SQLite's file, watched for being deleted or replaced under the server (CONTRACT §18). SQLite keeps the
 * file it opened: deleted, or replaced by another at its path (a restore, a `mv`), it goes on reading and
 * writing the lost inode, and every write is acknowledged and lost. The file's device and inode are taken
 * when it is opened and compared with the path's: before every write transaction (a stat, microseconds)
 * and every second on a timer, so that a server taking no writes notices too and says so (readiness 503,
 * an error logged naming the path). Once lost, it stays lost: the server is restarted to open the file now
 * at the path.
 */
import { statSync } from 'node:fs'
import { DatabaseFileLost } from './faults.js'

/** How often the file is looked at without writes. */
const WATCH_INTERVAL_MS = 1000

export interface FileWatch {
  /** The loss, when the path no longer names the file opened (noticed now or before). */
  check(): DatabaseFileLost | undefined
  /** The loss noticed so far, without looking. */
  lost(): DatabaseFileLost | undefined
  stop(): void
}

/** Watches `path`, opened just now; `onLost` is called once, when it is first noticed gone. */
export function watchFile(path: string, onLost: (lost: DatabaseFileLost) => void): FileWatch {
  const opened = statSync(path)
  let lost: DatabaseFileLost | undefined
  const check = (): DatabaseFileLost | undefined => {
    if (lost !== undefined) return lost
    const now = statSync(path, { throwIfNoEntry: false })
    if (now !== undefined && now.ino === opened.ino && now.dev === opened.dev) return undefined
    lost = new DatabaseFileLost(path)
    onLost(lost)
    return lost
  }
  const timer = setInterval(() => {
    try {
      check()
    } catch {
      // A stat that fails for another reason (a folder made unreadable) is looked at again next time.
    }
  }, WATCH_INTERVAL_MS)
  timer.unref()
  return { check, lost: () => lost, stop: () => clearInterval(timer) }
}
