/**
 * The bracketed names PHP's `http_build_query` writes (CONTRACT §1), which every client of the reference
 * system sends: `a[0]=1&a[1]=2` is the list [1, 2] in the order of the indexes, `venue[city]=Bern` the
 * object { city: "Bern" }, `organizer[0][organizer]=A` a list of objects; `a[]=1` appends. They are turned
 * into the value JSON would carry before the text is coerced and validated, so that a form body means what
 * the same payload as JSON means. A name that nests in a way its field does not take (`featured[0]`,
 * `categories[x]`) becomes a value its schema refuses, so validation answers 400 naming the field: no
 * value is ever dropped.
 */

import { MAX_DATES } from '../lib/recurrence.js'

/** `base[seg][seg]`: the base and the segments (an empty segment appends). */
const BRACKETED = /^([^[\]]+)((?:\[[^[\]]*\])+)$/

/**
 * No field of the contract nests deeper. A deeper name keeps one level more than this (its further
 * segments dropped), so that its field, which takes no such value, is refused by name: left as an unknown
 * name, it would be ignored in a query. The bound keeps the walk over the names shallow whatever they hold.
 */
const MAX_DEPTH = 3

/**
 * The most values one field takes (the spec's `maxItems` on every array parameter and field). A form
 * keeps one more than this of a repeated key: enough for validation to refuse the field by name, while
 * a body of 100,000 repeats costs no more memory than one of 101.
 */
export const MAX_FIELD_VALUES = 100

/** The most values one name keeps. */
const MAX_VALUES = MAX_FIELD_VALUES + 1

/**
 * Fields that take more values than `MAX_FIELD_VALUES` under one name, and how many one name keeps:
 * `recurrence[rdates][]` and `recurrence[exdates][]` take up to 1,000 dates together (CONTRACT §17).
 */
const WIDE_FIELDS: Readonly<Record<string, number>> = { recurrence: MAX_DATES + 1 }

interface Branch {
  children: Map<string, Branch | unknown[]>
}

function bracketPath(key: string): [string, string[]] | undefined {
  const match = BRACKETED.exec(key)
  if (match === null || match[1] === undefined || match[2] === undefined) return undefined
  const path = match[2].slice(1, -1).split('][')
  return [match[1], path.slice(0, MAX_DEPTH + 1)]
}

/**
 * The fields of `entries` (name and value pairs, in the order sent): a plain name repeated is a list,
 * `a[]` appends to `a`, and a bracketed name whose base `nests` accepts is nested as PHP reads it. Other
 * names are kept as sent.
 */
export function nestBracketedNames(entries: Iterable<[string, unknown]>, nests: (base: string) => boolean = () => true): Record<string, unknown> {
  const plain = new Map<string, unknown[]>()
  const trees = new Map<string, Branch>()
  // The names in the order they first appear (`a[0]` counting as `a`): lists' `rest_url`s keep it.
  const names = new Set<string>()
  for (const [key, value] of entries) {
    const parsed = bracketPath(key)
    const [base, path] = parsed !== undefined && nests(parsed[0]) ? parsed : [key, []]
    names.add(base)
    if (path.length === 0 || (path.length === 1 && path[0] === '')) {
      const values = plain.get(base) ?? []
      if (!plain.has(base)) plain.set(base, values)
      // `a[]` keeps being a list even when it holds one value.
      if (values.length < MAX_VALUES) values.push(value)
      if (path.length === 1 && !trees.has(base)) trees.set(base, { children: new Map() })
      continue
    }
    let branch = trees.get(base)
    if (branch === undefined) trees.set(base, branch = { children: new Map() })
    const most = Object.hasOwn(WIDE_FIELDS, base) ? WIDE_FIELDS[base] as number : MAX_VALUES
    for (const [i, segment] of path.entries()) {
      const name = segment === '' ? String(branch.children.size) : segment
      const child = branch.children.get(name)
      // Past the most a field takes, validation refuses the field whatever the rest holds.
      if (child === undefined && branch.children.size >= most) break
      if (i === path.length - 1) {
        if (Array.isArray(child)) {
          if (child.length < most) child.push(value)
        } else branch.children.set(name, [value])
      } else {
        // A name both a value and a parent (`a[0]=1&a[0][x]=2`): the later one stands for it, as in PHP.
        const next: Branch = child === undefined || Array.isArray(child) ? { children: new Map() } : child
        branch.children.set(name, next)
        branch = next
      }
    }
  }
  const out: Record<string, unknown> = Object.create(null)
  for (const name of names) {
    const values = plain.get(name) ?? []
    const tree = trees.get(name)
    if (tree === undefined) {
      set(out, name, values.length === 1 ? values[0] : values)
      continue
    }
    const nested = tree.children.size === 0 ? [] : valueOf(tree)
    set(out, name, values.length === 0 ? nested : [...values, ...(Array.isArray(nested) ? nested : [nested])])
  }
  return { ...out }
}

const INDEX = /^\d+$/

/** A branch as JSON would carry it: a list in the order of its indexes when every name is one, else an object. */
function valueOf(branch: Branch): unknown {
  const entries = [...branch.children.entries()]
  const leaf = (child: Branch | unknown[]): unknown => (Array.isArray(child) ? (child.length === 1 ? child[0] : child) : valueOf(child))
  if (entries.every(([name]) => INDEX.test(name))) {
    return entries.sort(([a], [b]) => compareIndexes(a, b)).map(([, child]) => leaf(child))
  }
  const out: Record<string, unknown> = Object.create(null)
  for (const [name, child] of entries) set(out, name, leaf(child))
  return { ...out }
}

/** Indexes compared as numbers of any length (`a[18446744073709551616]` is no reason to lose precision). */
function compareIndexes(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, '')
  const y = b.replace(/^0+(?=\d)/, '')
  return x.length - y.length || (x < y ? -1 : x > y ? 1 : 0)
}

/** An own property even for `__proto__`, so that validation refuses it by name like any unknown field. */
function set(target: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true })
}
