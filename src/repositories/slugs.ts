/**
 * Slugs are unique per table and language (and taxonomy, for terms): the storage side of CONTRACT §5's
 * slug rules, which lib/slug.ts writes.
 */
import { sql } from 'kysely'
import type { Taxonomy } from '../db/schema.js'
import type { Db } from '../db/unit-of-work.js'
import { MAX_SLUG_LENGTH, uniqueSlug } from '../lib/slug.js'

export type SluggedTable = 'events' | 'venues' | 'organizers' | 'terms'

/** `wanted`, or the first free `wanted-N`, among the table's slugs in this language (terms: and taxonomy). */
export async function freeSlug(db: Db, table: SluggedTable, language: string, wanted: string, self: number | undefined, taxonomy?: Taxonomy): Promise<string> {
  const prefix = wanted.slice(0, MAX_SLUG_LENGTH - 12)
  let query = db.selectFrom(table).select('slug').where('language', '=', language)
    // Slugs hold only [a-z0-9-], all below '~': this range is "starts with prefix", served by the index.
    .where('slug', '>=', prefix).where('slug', '<', `${prefix}~`)
  if (taxonomy !== undefined) query = query.where(sql.ref('taxonomy'), '=', taxonomy)
  if (self !== undefined) query = query.where('id', '!=', self)
  const taken = new Set((await query.execute()).map((r) => r.slug))
  return uniqueSlug(wanted, taken)
}

/** A slug that cannot clash while the real one waits for the new id. */
export function provisionalSlug(singular: string, slug: string): string {
  return slug === '' ? `${singular}--provisional-${process.hrtime.bigint().toString(36)}` : slug
}
