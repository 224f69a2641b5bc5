/**
 * Row types of the tables created by the migrations, as Kysely sees them. Instants are UTC or wall-time
 * text `YYYY-MM-DD HH:MM:SS`; booleans are 0/1 integers, mapped to booleans once, in the mappers.
 */
import type { Generated, Selectable } from 'kysely'

export type Flag = 0 | 1

export interface UsersTable {
  id: Generated<number>
  name: string
  role: string
  created_at: string
}

export interface ApiKeysTable {
  id: Generated<number>
  user_id: number
  key_hash: string
  created_at: string
  revoked_at: string | null
}

export interface ImagesTable {
  id: Generated<number>
  url: string
  created_at: string
}

/** Columns that events, venues and organizers share: language, translation group, author, status, dates. */
interface PostColumns {
  id: Generated<number>
  language: string
  translation_group: number | null
  author: number | null
  status: string
  slug: string
  description: string | null
  image_id: number | null
  date: string
  date_utc: string
  modified: string
  modified_utc: string
  version: Generated<number>
}

export interface EventsTable extends PostColumns {
  password: string | null
  title: string
  excerpt: string | null
  all_day: Flag
  start_date: string
  end_date: string
  start_utc: string
  end_utc: string
  timezone: string
  cost: string | null
  website: string | null
  show_map: Flag
  show_map_link: Flag
  hide_from_listings: Flag
  sticky: Flag
  featured: Flag
  post_parent: number | null
  /** `null` for a single event, else the series as JSON text `{"rule","rdates","exdates"}` (migration 0018). */
  recurrence: string | null
  /** An unbounded series: the UTC horizon its occurrence rows reach; null otherwise (migration 0018). */
  recurrence_through_utc: string | null
}

export interface VenuesTable extends PostColumns {
  name: string
  address: string | null
  city: string | null
  country: string | null
  province: string | null
  state: string | null
  zip: string | null
  phone: string | null
  website: string | null
  stateprovince: string | null
  show_map: Generated<Flag>
  show_map_link: Generated<Flag>
  geo_lat: number | null
  geo_lng: number | null
}

export interface OrganizersTable extends PostColumns {
  name: string
  phone: string | null
  website: string | null
  email: string | null
}

export type Taxonomy = 'category' | 'tag'

export interface TermsTable {
  id: Generated<number>
  taxonomy: Taxonomy
  language: string
  translation_group: number | null
  name: string
  name_key: string
  slug: string
  description: string | null
  parent: Generated<number>
  event_count: Generated<number>
  version: Generated<number>
}

export interface EventTermsTable {
  event_id: number
  term_id: number
}

export interface EventVenuesTable {
  event_id: number
  venue_id: number
  position: number
}

export interface EventOrganizersTable {
  event_id: number
  organizer_id: number
  position: number
}

/** The resources the change log speaks of, as `GET /changes` names them. */
export type ChangeResource = 'events' | 'venues' | 'organizers' | 'categories' | 'tags'
export type ChangeAction = 'created' | 'updated' | 'deleted'

/** One entry of the change log: a record as one write left it (status and author null for terms and deletes). */
export interface ChangesTable {
  position: Generated<number>
  resource: ChangeResource
  record_id: number
  language: string
  action: ChangeAction
  changed_utc: string
  status: string | null
  author: number | null
}

export interface ChangeLogTable {
  id: number
  /** The highest position retention has pruned (0: none): older cursors are expired. */
  pruned_through: number
}

/** One row (id 1): moved by triggers whenever `api_keys` or `users` is written (migration 0026). */
export interface KeyEpochTable {
  id: number
  n: number
}

/** One row (id 1): moved by triggers whenever a table the read caches read is written (migration 0007). */
export interface DataEpochTable {
  id: number
  n: number
}

/**
 * One occurrence of an event (migration 0017): a single event's own dates, with the columns every list
 * checks copied from the event (kept in step by triggers on `events`). Lists read these rows.
 */
export interface EventOccurrencesTable {
  event_id: number
  /** `YYYYMMDDTHHMMSSZ` of its original UTC start; all-day: `YYYYMMDD` of its day. */
  occurrence: string
  start_utc: string
  end_utc: string
  language: string
  hide_from_listings: Flag
  status: string
  featured: Flag
  author: number | null
  /** 1 when the occurrence has an override (`event_overrides`, migration 0018). */
  overridden: Generated<Flag>
}

/**
 * The changes of one occurrence of a series (migration 0018), keyed by the event and the occurrence id (its
 * original start). `null`: not changed. `venues`, `organizers`: JSON arrays of ids when the links are changed.
 */
export interface EventOverridesTable {
  event_id: number
  occurrence: string
  title: string | null
  description: string | null
  excerpt: string | null
  start_date: string | null
  end_date: string | null
  start_utc: string | null
  end_utc: string | null
  cost: string | null
  website: string | null
  venues: string | null
  organizers: string | null
  version: Generated<number>
  /** The override's title and description folded as the search index folds them (migration 0019), or null. */
  search_title: string | null
  search_description: string | null
}

/** The venues and organizers an override shows, one row per target (migration 0019), for the list filters. */
export interface EventOverrideLinksTable {
  event_id: number
  occurrence: string
  kind: 'venue' | 'organizer'
  target_id: number
}

/** The stored answer to an anonymous single read of an event, its terms left out (migration 0009, repositories/event-documents.ts). */
export interface EventDocumentsTable {
  event_id: number
  /** The event's translation group: `coalesce(translation_group, id)`. */
  grp: number
  /** A digest of what the bytes depend on besides the data (the public URL, the record format). */
  context: string
  /** The event's stored version. */
  version: number
  /** The digest of the record without its categories and tags (http/etag.ts). */
  digest: string
  /** The JSON sent, its `categories` and `tags` arrays empty. */
  body: Buffer
  /** The ids of its categories and of its tags, comma-separated, in the order shown. */
  category_ids: string
  tag_ids: string
  /** Byte offsets in `body` inside the empty `categories` and `tags` arrays. */
  category_at: number
  tag_at: number
  /** The bytes of `body` a list leaves out (its JSON-LD). */
  ld_from: number
  ld_to: number
}

/** A webhook subscription (CONTRACT §13); `events` is a JSON array of types, `active` 0/1. */
export interface WebhooksTable {
  id: Generated<number>
  url: string
  events: string
  description: string | null
  active: number
  /** The signing secret as created (`whsec_…`): the server signs with it; never shown again. */
  secret: string
  created_utc: string
  modified_utc: string
  /** Deliveries given up in a row. */
  failures: Generated<number>
  disabled_utc: string | null
  disabled_reason: string | null
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

/** The outbox: one change of the log for one subscription, until delivered or given up. */
export interface WebhookDeliveriesTable {
  id: Generated<number>
  webhook_id: number
  position: number
  type: string
  resource: ChangeResource
  record_id: number
  language: string
  changed_utc: string
  status: Generated<DeliveryStatus>
  attempts: Generated<number>
  next_attempt_utc: string
  lease_owner: string | null
  lease_until: string | null
  payload: string | null
  finished_utc: string | null
}

export type AttemptOutcome = 'delivered' | 'retrying' | 'failed'

/** One attempt of a delivery, as it went. */
export interface WebhookAttemptsTable {
  id: Generated<number>
  delivery_id: number
  webhook_id: number
  attempt: number
  attempted_utc: string
  outcome: AttemptOutcome
  response_status: number | null
  error: string | null
  duration_ms: number
}

/**
 * An `Idempotency-Key` of a caller (migration 0016): a claim held by `token` until `lease_until`, then,
 * once its create committed, the answer given to every retry (`status`, `location`, `etag`, `body`).
 * Instants are ISO 8601 UTC with milliseconds.
 */
export interface IdempotencyKeysTable {
  user_id: number
  key: string
  fingerprint: string
  token: string
  lease_until: string
  created_utc: string
  status: number | null
  location: string | null
  etag: string | null
  body: string | null
}

export interface Database {
  users: UsersTable
  api_keys: ApiKeysTable
  images: ImagesTable
  events: EventsTable
  venues: VenuesTable
  organizers: OrganizersTable
  terms: TermsTable
  event_terms: EventTermsTable
  event_venues: EventVenuesTable
  event_organizers: EventOrganizersTable
  event_occurrences: EventOccurrencesTable
  event_overrides: EventOverridesTable
  event_override_links: EventOverrideLinksTable
  changes: ChangesTable
  change_log: ChangeLogTable
  data_epoch: DataEpochTable
  key_epoch: KeyEpochTable
  event_documents: EventDocumentsTable
  webhooks: WebhooksTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
  idempotency_keys: IdempotencyKeysTable
}

export type EventRow = Selectable<EventsTable>
/** The columns events, venues and organizers share, as read. */
export type PostRow = Selectable<PostColumns>
export type VenueRow = Selectable<VenuesTable>
export type OrganizerRow = Selectable<OrganizersTable>
export type TermRow = Selectable<TermsTable>
export type ChangeRow = Selectable<ChangesTable>
export type WebhookRow = Selectable<WebhooksTable>
export type DeliveryRow = Selectable<WebhookDeliveriesTable>
export type AttemptRow = Selectable<WebhookAttemptsTable>
export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>
