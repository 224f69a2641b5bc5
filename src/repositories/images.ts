/**
 * Image records: a write names an image by id, or by URL, which makes a new image record.
 */
import { sql } from 'kysely'
import type { Image } from '../contract.js'
import { idListValue, inIdValue } from '../db/dialect.js'
import { prepared } from '../db/prepared.js'
import { recordChange, type Db, type Tx } from '../db/unit-of-work.js'
import { formatUtc } from '../lib/dates.js'
import { normalisedHttpUrl } from '../lib/urls.js'

/** The image a write asks for, once checked: an existing one, a new one from a URL, none (null), or no change. */
export type ImageChoice = { id: number } | { url: string } | null | undefined

/** Whether an image record with this id exists. */
export async function imageExists(db: Db, id: number): Promise<boolean> {
  if (!Number.isSafeInteger(id)) return false
  return (await db.selectFrom('images').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
}

/** The image id to store for a checked choice (undefined keeps the stored one), making the record for a URL. */
export async function storeImage(trx: Tx, choice: ImageChoice, now: Date): Promise<number | null | undefined> {
  if (choice === undefined || choice === null) return choice
  if ('id' in choice) return choice.id
  const { id } = await trx.insertInto('images').values({ url: choice.url, created_at: formatUtc(now) }).returning('id').executeTakeFirstOrThrow()
  recordChange(trx, { resource: 'image', id, action: 'create' })
  return id
}

/** Whether a checked choice names the image a record already has (the same id, or a URL it already has): no change. */
export async function sameImage(db: Db, current: number | null, choice: ImageChoice): Promise<boolean> {
  if (choice === undefined) return true
  if (choice === null || current === null) return choice === current
  if ('id' in choice) return choice.id === current
  const row = await db.selectFrom('images').select('url').where('id', '=', current).executeTakeFirst()
  return row?.url === choice.url
}

/** The image records of a page of rows, in one query. */
/** Images' ids and URLs by id (a list of ids: `idListValue`), the statement built once (db/prepared.ts). */
const imageRows = prepared(1, (db, list: number[] | string) => db.selectFrom('images').select(['id', 'url']).where(inIdValue(db, sql.ref('id'), list)))

export async function imagesOf(db: Db, ids: ReadonlyArray<number | null>): Promise<Map<number, Image>> {
  const wanted = [...new Set(ids.filter((id): id is number => id !== null))]
  if (wanted.length === 0) return new Map()
  const list = idListValue(db, wanted)
  const rows = list === undefined ? [] : (await imageRows(db, list)).rows
  const images = new Map<number, Image>()
  for (const row of rows) {
    const image = imageOf(row.id, row.url)
    if (image !== null) images.set(row.id, image)
  }
  return images
}

/**
 * The image record with this id and stored URL (null: no such record). No stored value may make a
 * read fail: a URL stored before normalisation (or by hand) is answered in its normalised form, and
 * one that does not parse as an image URL is no image (null).
 */
export function imageOf(id: number, url: string | null): Image | null {
  const normalised = url === null ? undefined : normalisedHttpUrl(url)
  return normalised === undefined ? null : { id, url: normalised }
}
