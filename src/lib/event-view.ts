/**
 * What of an event a caller is shown (CONTRACT §2, §5, §6): linked venues and organizers the caller may not
 * read, and those in the trash, are left out, and so are the versions of it and of them in `translations` it may
 * not read; in lists a password-protected event keeps its place with its description and excerpt
 * blanked; a single read carries schema.org JSON-LD. Each form of a record is made once per record
 * object and kept as long as the record lives (records are never changed once made), so that the JSON
 * of a record the read cache keeps is made once too.
 */
import type { Event, Organizer, Venue } from '../contract.js'
import { eventJsonLd } from './json-ld.js'
import { canRead, canReadEvent, canReadLinked, type Caller, type Owned } from './rights.js'
import { translationsSeenBy } from './translation-view.js'

const publicForms = new WeakMap<Event, Event>()
const listForms = new WeakMap<Event, Event>()
const singleForms = new WeakMap<Event, Event>()

function memo(forms: WeakMap<Event, Event>, event: Event, make: () => Event): Event {
  let form = forms.get(event)
  if (form === undefined) {
    form = make()
    forms.set(event, form)
  }
  return form
}

/**
 * Whether an event shows this linked venue or organizer to `caller`: one it may read, and never one in
 * the trash, whoever asks (CONTRACT §5, as the reference does); a restore brings it back.
 */
function shown(caller: Caller | null, linked: Owned): boolean {
  return linked.status !== 'trash' && canRead(caller, linked)
}

/**
 * The event with only the linked venues and organizers it shows `caller`, and in its `translations` and
 * theirs only the versions it may read (the same object when that is all of them).
 */
export function seenBy(caller: Caller | null, event: Event): Event {
  const venue = event.venue.filter((v) => shown(caller, v))
  const organizer = event.organizer.filter((o) => shown(caller, o))
  const all = venue.length === event.venue.length && organizer.length === event.organizer.length
    && translationsSeenBy(caller, event.id, event.translations, canReadEvent) === event.translations
    && venue.every((v) => linkedSeenBy(caller, v) === v) && organizer.every((o) => linkedSeenBy(caller, o) === o)
  if (all) return event
  const make = (): Event => ({
    ...event,
    venue: venue.map((v) => linkedSeenBy(caller, v)),
    organizer: organizer.map((o) => linkedSeenBy(caller, o)),
    translations: translationsSeenBy(caller, event.id, event.translations, canReadEvent),
  })
  return caller === null ? memo(publicForms, event, make) : make()
}

const linkedPublicForms = new WeakMap<Venue | Organizer, Venue | Organizer>()

/** A venue or organizer with only the versions `caller` may read in its `translations` (the same object when that is all). */
export function linkedSeenBy<R extends Venue | Organizer>(caller: Caller | null, record: R): R {
  const translations = translationsSeenBy(caller, record.id, record.translations, canReadLinked)
  if (translations === record.translations) return record
  if (caller !== null) return { ...record, translations }
  let form = linkedPublicForms.get(record)
  if (form === undefined) linkedPublicForms.set(record, form = { ...record, translations })
  return form as R
}

/** The event as a list shows it: a protected one without description and excerpt. */
export function listed(event: Event, passwordProtected: boolean): Event {
  if (!passwordProtected) return event
  return memo(listForms, event, () => ({ ...event, description: null, excerpt: null }))
}

/** The event as a single read shows it: with its JSON-LD. */
export function withJsonLd(event: Event): Event {
  return memo(singleForms, event, () => ({ ...event, json_ld: eventJsonLd(event) }))
}
