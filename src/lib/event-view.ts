/**
 * What of an event a caller is shown (CONTRACT §5, §6): linked venues and organizers the caller may not
 * read, and those in the trash, are left out; in lists a password-protected event keeps its place with its description and excerpt
 * blanked; a single read carries schema.org JSON-LD. Each form of a record is made once per record
 * object and kept as long as the record lives (records are never changed once made), so that the JSON
 * of a record the read cache keeps is made once too.
 */
import type { Event } from '../contract.js'
import { eventJsonLd } from './json-ld.js'
import { canRead, type Caller, type Owned } from './rights.js'

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

/** The event with only the linked venues and organizers it shows `caller` (the same object when that is all of them). */
export function seenBy(caller: Caller | null, event: Event): Event {
  const all = event.venue.every((v) => shown(caller, v)) && event.organizer.every((o) => shown(caller, o))
  if (all) return event
  const make = (): Event => ({ ...event, venue: event.venue.filter((v) => shown(caller, v)), organizer: event.organizer.filter((o) => shown(caller, o)) })
  return caller === null ? memo(publicForms, event, make) : make()
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
