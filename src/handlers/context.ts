/**
 * What every handler needs, passed in by `buildApp`: no module state, so each test has its own.
 */
import type { Kysely } from 'kysely'
import type { Config } from '../config.js'
import type { Database } from '../db/schema.js'
import type { Catalog } from '../http/messages.js'
import type { LoadedSpec } from '../http/spec.js'
import type { RecordSerializers } from '../http/serialized.js'
import type { EventDocuments } from '../repositories/event-documents.js'
import type { Site } from '../repositories/site.js'

export interface AppContext {
  db: Kysely<Database>
  config: Config
  /** `{base_url}`: PUBLIC_URL, else the address listened on (read when a URL is made: PORT=0). */
  readonly publicUrl: string
  /** `{base_url}/calendar/events/v1`, the prefix of every `rest_url`. */
  readonly apiUrl: string
  /** How records are written (what record reads take after `db`). */
  site: Site
  /** The clock, injectable so that tests never depend on today's date. */
  now: () => Date
  spec: LoadedSpec
  /** The messages of every language (error texts, the name of a calendar feed). */
  catalog: Catalog
  /** Records' JSON by the contract's schemas, made once per record object. */
  json: RecordSerializers
  /** Anonymous single reads of events stored as the bytes sent (repositories/event-documents.ts). */
  documents: EventDocuments
}
