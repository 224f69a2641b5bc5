/**
 * An organizer body's own fields, checked (CONTRACT §2): phone, website and e-mail address, an empty
 * one clearing the field.
 */
import type { Schema } from '../contract.js'
import { invalidParam } from '../http/errors.js'
import { emptyToNull } from '../lib/text.js'
import { isHttpUrl } from '../lib/urls.js'
import type { OrganizerColumns } from '../repositories/organizers.js'
import type { LinkedFields } from './linked-input.js'

/** A plain address check (local@domain.tld, no spaces); the schema's `format: email` runs first. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export function organizerFields(input: Schema<'OrganizerCreate'> | Schema<'OrganizerUpdate'>): LinkedFields<OrganizerColumns> {
  const own: OrganizerColumns = {}
  if (input.phone !== undefined) own.phone = emptyToNull(input.phone) ?? null
  if (input.website !== undefined) {
    const website = emptyToNull(input.website) ?? null
    if (website !== null && !isHttpUrl(website)) throw invalidParam('website', 'invalidUrl')
    own.website = website
  }
  if (input.email !== undefined) {
    const email = emptyToNull(input.email) ?? null
    if (email !== null && !EMAIL.test(email)) throw invalidParam('email', 'invalidEmail')
    own.email = email
  }
  return {
    ...(input.organizer !== undefined ? { name: input.organizer } : {}),
    ...(input.description !== undefined ? { description: emptyToNull(input.description) ?? null } : {}),
    own,
  }
}
