/**
 * Slugs are unique per table and language (and taxonomy, for terms): the storage side of CONTRACT §5's
 * slug rules, which lib/slug.ts writes.
 */
import { sql, type CompiledQuery } from 'kysely'
import { boundQuery, byShape, executeCompiled } from '../db/prepared.js'
import type { Taxonomy } from '../db/schema.js'
import type { Db } from '../db/unit-of-work.js'
import { MAX_SLUG_LENGTH, uniqueSlug } from '../lib/slug.js'

export type SluggedTable = 'events' | 'venues' | 'organizers' | 'terms'

/** `wanted`, or the first free `wanted-N`, among the table's slugs in this language (terms: and taxonomy). */
export async function freeSlug(db: Db, table: SluggedTable, language: string, wanted: string, self: number | undefined, taxonomy?: Taxonomy): Promise<string> {
  const { rows } = await executeCompiled(db, freeSlugRead(db, table, language, wanted, self, taxonomy))
  const taken = new Set(rows.map((r) => r.slug))
  return uniqueSlug(wanted, taken)
}

/** The statement `freeSlug` runs (for a read sent ahead: dialect.ts `readAhead`). */
export function freeSlugRead(db: Db, table: SluggedTable, language: string, wanted: string, self: number | undefined, taxonomy?: Taxonomy): CompiledQuery<{ slug: string }> {
  const prefix = wanted.slice(0, MAX_SLUG_LENGTH - 12)
  const values = [language, prefix, `${prefix}~`, ...(taxonomy === undefined ? [] : [taxonomy]), ...(self === undefined ? [] : [self])]
  return slugsTaken(`${table} ${taxonomy !== undefined} ${self !== undefined}`)(db, ...values)
}

/**
 * The slugs of a table in a language that start with a prefix (then the taxonomy and the record left
 * out, when the key says so).
 */
const slugsTaken = byShape(16, (key) => {
  const [table, byTaxonomy, bySelf] = key.split(' ') as [SluggedTable, string, string]
  return boundQuery(3 + (byTaxonomy === 'true' ? 1 : 0) + (bySelf === 'true' ? 1 : 0), (db, ...values: Array<string | number>) => {
    const [language, from, below, ...rest] = values
    let query = db.selectFrom(table).select('slug').where('language', '=', language as string)
      // Slugs hold only [a-z0-9-], all below '~': this range is "starts with prefix", served by the index.
      .where('slug', '>=', from as string).where('slug', '<', below as string)
    if (byTaxonomy === 'true') query = query.where(sql.ref('taxonomy'), '=', rest.shift())
    if (bySelf === 'true') query = query.where('id', '!=', rest.shift() as number)
    return query
  })
})

/** A slug that cannot clash while the real one waits for the new id. */
export function provisionalSlug(singular: string, slug: string): string {
  return slug === '' ? `${singular}--provisional-${process.hrtime.bigint().toString(36)}` : slug
}
