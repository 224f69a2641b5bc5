/**
 * SQLite: most of the WAL copied back into the database file by a thread of its own, so that requests do
 * not wait for it. SQLite copies it (a checkpoint) at the end of the write that fills it past
 * `wal_autocheckpoint` pages (10,000 here, db/database.ts), on the connection that wrote: the event loop
 * then stood still while some 40 MB were copied and synced (42–55 ms in the benchmark's mixed reads and
 * writes, about 30 ms three times a second under a stream of creates). A worker thread with a connection of
 * its own asks for a passive checkpoint every CHECKPOINT_INTERVAL_MS: it copies what no reader still needs
 * while the server reads and writes (WAL mode lets readers and the writer go on). Under a steady stream of
 * writes such a checkpoint never finds the WAL wholly copied (frames come in while it copies), and only a
 * wholly copied WAL is started over by the next write: the connection's own checkpoint at its threshold
 * still does that, but then copies only what came in since the thread's last round (creates: 5–11 ms
 * instead of about 30). Nodes sharing the file each run one; SQLite serializes checkpoints (one that
 * finds another running gives way).
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/** How often the thread asks for a checkpoint. */
export const CHECKPOINT_INTERVAL_MS = 100

/** What a checkpoint reported (SQLite's `wal_checkpoint`): frames in the WAL, and copied back of them. */
export interface CheckpointResult {
  busy: number
  log: number
  checkpointed: number
}

export interface CheckpointerOptions {
  intervalMs?: number
  /** Told of each checkpoint that copied something. */
  onCheckpoint?: (result: CheckpointResult) => void
  /** Told when a checkpoint failed (the thread then stops checkpointing) or the thread could not start; the connection's own checkpoints go on. */
  onError?: (error: Error) => void
}

export interface Checkpointer {
  /** Stops the thread (waits for a checkpoint in progress) and closes its connection. */
  stop(): Promise<void>
}

// Plain JavaScript run by the thread (evaluated: the bundle has no file of its own for it).
const SOURCE = `
'use strict'
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file, { fileMustExist: true })
const timer = setInterval(() => {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)')
    if (result !== undefined && result.checkpointed > 0) parentPort.postMessage({ result })
  } catch (error) {
    // Told once: the thread stops checkpointing, and the connection's own checkpoints go on.
    clearInterval(timer)
    parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) })
  }
}, workerData.intervalMs)
parentPort.on('message', (message) => {
  if (message !== 'stop') return
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

/** Starts checkpointing the SQLite database file `file` (in WAL mode) from a thread of its own. */
export function startCheckpointer(file: string, options: CheckpointerOptions = {}): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(SOURCE, { eval: true, workerData: { file, driver, intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS } })
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  worker.on('message', (message: { result?: CheckpointResult; error?: string }) => {
    if (message.result !== undefined) options.onCheckpoint?.(message.result)
    if (message.error !== undefined) options.onError?.(new Error(`checkpoint: ${message.error}`))
  })
  worker.on('error', (error) => options.onError?.(error))
  let stopping: Promise<void> | undefined
  return {
    stop() {
      stopping ??= (async () => {
        worker.postMessage('stop')
        await exited
      })()
      return stopping
    },
  }
}
