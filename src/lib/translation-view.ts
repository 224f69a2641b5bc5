/**
 * What of a record's `translations` a caller is shown (CONTRACT §2): the map leaves out the versions the
 * caller could not read directly (another author's draft, a private or trashed version), as `venue` and
 * `organizer` leave out linked records. Records are made once for every caller (the read cache keeps
 * them), so each map made by the repositories carries the status and author of every version it names,
 * kept beside it here (never serialized), and a caller's map is derived from them.
 */
import type { Caller, Owned } from './rights.js'

type Translations = Record<string, number>

const statesOf = new WeakMap<Translations, ReadonlyMap<number, Owned>>()
const publicForms = new WeakMap<Translations, Map<number, Translations>>()

/** Keeps the status and author of each version `translations` names with it; returns the map. */
export function withVersionStates(translations: Translations, states: ReadonlyMap<number, Owned>): Translations {
  statesOf.set(translations, states)
  return translations
}

/**
 * The versions of `translations`, the map of record `self`, that `caller` may read by `readable`: the
 * record itself always (it is being shown), the map itself when that is all of them or when the states
 * are not known (a map made without them names the record alone).
 */
export function translationsSeenBy(caller: Caller | null, self: number, translations: Translations, readable: (caller: Caller | null, state: Owned) => boolean): Translations {
  const states = statesOf.get(translations)
  if (states === undefined) return translations
  const shown = (id: number): boolean => {
    const state = states.get(id)
    return id === self || state === undefined || readable(caller, state)
  }
  if (Object.values(translations).every(shown)) return translations
  // One map may serve every version of a group: the public form is kept per version.
  const forms = caller === null ? publicForms.get(translations) ?? new Map<number, Translations>() : undefined
  const known = forms?.get(self)
  if (known !== undefined) return known
  const seen = Object.fromEntries(Object.entries(translations).filter(([, id]) => shown(id)))
  if (forms !== undefined) {
    forms.set(self, seen)
    publicForms.set(translations, forms)
  }
  return seen
}
