/**
 * The demo calendar (`npm run demo`): a season of events in Zürich in English, German and Swiss French,
 * with their venues, organizers, categories and tags, and three recurring series (a weekly class, a meetup on
 * the last Friday of every month, a yearly festival with one year cancelled). Dates are days from today, so the
 * calendar is always upcoming. Names are unique so that records can be linked by name before their ids are known.
 *
 * Its first records are the ones the contract's examples name: event 1 and the event `open-air-cinema`,
 * venue 1 and `rote-fabrik`, organizer 1 and `kino-am-see`, category 1 and tag 2 (the examples of
 * `redocly respect` and Swagger UI's "Try it out" work against this data).
 */

export type DemoLanguage = 'en' | 'de' | 'ch-fr'

export interface DemoTerm {
  name: string
  description?: string
  /** Name of the parent category. */
  parent?: string
  language: DemoLanguage
  /** Name of the record this one translates. */
  translationOf?: string
}

export interface DemoVenue {
  venue: string
  address: string
  city: string
  zip: string
  country: string
  website?: string
  phone?: string
  description?: string
  language: DemoLanguage
  translationOf?: string
}

export interface DemoOrganizer {
  organizer: string
  email?: string
  website?: string
  phone?: string
  description?: string
  language: DemoLanguage
  translationOf?: string
}

export interface DemoEvent {
  title: string
  description: string
  excerpt?: string
  /** Days from today (site time zone) and the wall time in Europe/Zurich. */
  day: number
  start: string
  end: string
  /** Days the event lasts beyond its first (exhibitions). */
  days?: number
  allDay?: boolean
  cost?: string
  website?: string
  featured?: boolean
  categories: string[]
  tags: string[]
  venues: string[]
  organizers: string[]
  language: DemoLanguage
  translationOf?: string
  /** Set after the create, through the by-id route (the only one that takes a password). */
  password?: string
  /** A recurring series (CONTRACT §17), created in the same request as the event. */
  recurrence?: DemoRecurrence
}

export interface DemoRecurrence {
  /** The RRULE value. */
  rule: string
  /** The first occurrence is the last Friday of the month `day` falls in (of the next month when that one is past). */
  lastFriday?: boolean
  /** The occurrence this many years after the first is cancelled (an exdate). */
  cancelledYear?: number
}

export const CATEGORIES: DemoTerm[] = [
  { name: 'Music', description: 'Concerts of every kind.', language: 'en' },
  { name: 'Jazz', description: 'Swing, bebop and what came after.', parent: 'Music', language: 'en' },
  { name: 'Classical', description: 'Orchestras, choirs and chamber music.', parent: 'Music', language: 'en' },
  { name: 'Film', description: 'Screenings indoors and under the sky.', language: 'en' },
  { name: 'Theatre', description: 'Plays, cabaret and dance.', language: 'en' },
  { name: 'Exhibitions', description: 'Art and design on show.', language: 'en' },
  { name: 'Musik', description: 'Konzerte aller Art.', language: 'de', translationOf: 'Music' },
  { name: 'Film und Kino', description: 'Vorführungen drinnen und unter freiem Himmel.', language: 'de', translationOf: 'Film' },
  { name: 'Ausstellungen', description: 'Kunst und Design.', language: 'de', translationOf: 'Exhibitions' },
  { name: 'Musique', description: 'Des concerts de tous genres.', language: 'ch-fr', translationOf: 'Music' },
  { name: 'Cinéma', description: 'Des projections en salle et en plein air.', language: 'ch-fr', translationOf: 'Film' },
  { name: 'Théâtre', description: 'Pièces, cabaret et danse.', language: 'ch-fr', translationOf: 'Theatre' },
]

export const TAGS: DemoTerm[] = [
  { name: 'Open air', description: 'Outdoors, whatever the weather.', language: 'en' },
  { name: 'Free entry', language: 'en' },
  { name: 'Wheelchair accessible', language: 'en' },
  { name: 'Late night', language: 'en' },
  { name: 'Open Air', description: 'Draussen, bei jedem Wetter.', language: 'de', translationOf: 'Open air' },
  { name: 'Eintritt frei', language: 'de', translationOf: 'Free entry' },
  { name: 'Plein air', description: 'Dehors, par tous les temps.', language: 'ch-fr', translationOf: 'Open air' },
  { name: 'Entrée libre', language: 'ch-fr', translationOf: 'Free entry' },
]

export const VENUES: DemoVenue[] = [
  { venue: 'Volkshaus', address: 'Stauffacherstrasse 60', city: 'Zürich', zip: '8004', country: 'Switzerland', website: 'https://www.volkshaus.ch', phone: '+41 44 242 11 55', description: 'A hall for concerts and congresses since 1910.', language: 'en' },
  { venue: 'Rote Fabrik', address: 'Seestrasse 395', city: 'Zürich', zip: '8038', country: 'Switzerland', website: 'https://rotefabrik.ch', description: 'A former silk mill on the lake, now a cultural centre.', language: 'en' },
  { venue: 'Tonhalle', address: 'Claridenstrasse 7', city: 'Zürich', zip: '8002', country: 'Switzerland', website: 'https://www.tonhalle-orchester.ch', language: 'en' },
  { venue: 'Kunsthaus', address: 'Heimplatz 1', city: 'Zürich', zip: '8001', country: 'Switzerland', website: 'https://www.kunsthaus.ch', language: 'en' },
  { venue: 'Landiwiese', address: 'Mythenquai', city: 'Zürich', zip: '8002', country: 'Switzerland', description: 'A lawn on the lake shore.', language: 'en' },
  { venue: 'Volkshaus Zürich', address: 'Stauffacherstrasse 60', city: 'Zürich', zip: '8004', country: 'Schweiz', website: 'https://www.volkshaus.ch', language: 'de', translationOf: 'Volkshaus' },
  { venue: 'Rote Fabrik Zürich', address: 'Seestrasse 395', city: 'Zürich', zip: '8038', country: 'Schweiz', language: 'de', translationOf: 'Rote Fabrik' },
  { venue: 'Kunsthaus Zürich', address: 'Heimplatz 1', city: 'Zürich', zip: '8001', country: 'Schweiz', language: 'de', translationOf: 'Kunsthaus' },
  { venue: 'Salle du Volkshaus', address: 'Stauffacherstrasse 60', city: 'Zurich', zip: '8004', country: 'Suisse', language: 'ch-fr', translationOf: 'Volkshaus' },
  { venue: 'Théâtre de Vidy', address: 'Avenue Émile-Henri-Jaques-Dalcroze 5', city: 'Lausanne', zip: '1007', country: 'Suisse', website: 'https://vidy.ch', language: 'ch-fr' },
]

export const ORGANIZERS: DemoOrganizer[] = [
  { organizer: 'Jazz Club Zürich', email: 'info@jazzclub.example', website: 'https://jazzclub.example', phone: '+41 44 000 00 01', description: 'Volunteers who bring jazz to Zürich.', language: 'en' },
  { organizer: 'Kino am See', email: 'hello@kino-am-see.example', website: 'https://kino-am-see.example', language: 'en' },
  { organizer: 'Tonhalle Society', email: 'tickets@tonhalle.example', language: 'en' },
  { organizer: 'Jazzclub Zürich', email: 'info@jazzclub.example', language: 'de', translationOf: 'Jazz Club Zürich' },
  { organizer: 'Kino am See Zürich', email: 'hallo@kino-am-see.example', language: 'de', translationOf: 'Kino am See' },
  { organizer: 'Club de jazz de Zurich', email: 'info@jazzclub.example', language: 'ch-fr', translationOf: 'Jazz Club Zürich' },
  { organizer: 'Cinéma au bord du lac', email: 'bonjour@kino-am-see.example', language: 'ch-fr', translationOf: 'Kino am See' },
]

const jazz = (title: string, day: number, extra: Partial<DemoEvent> = {}): DemoEvent => ({
  title, day, start: '21:00', end: '23:30', cost: 'CHF 25', description: `${title}: two sets of live jazz.`,
  categories: ['Jazz'], tags: ['Late night'], venues: ['Volkshaus'], organizers: ['Jazz Club Zürich'], language: 'en', ...extra,
})

export const EVENTS: DemoEvent[] = [
  jazz('Late Night Jazz', 3, { featured: true, excerpt: 'The house band and a guest soloist.', website: 'https://jazzclub.example/late-night' }),
  { title: 'Open-Air Cinema', description: 'Classic films on a big screen by the lake, after sunset.', day: 5, start: '21:15', end: '23:45', cost: 'CHF 19', categories: ['Film'], tags: ['Open air'], venues: ['Rote Fabrik'], organizers: ['Kino am See'], language: 'en' },
  jazz('Jam Session', 10, { cost: 'Free', tags: ['Free entry', 'Late night'] }),
  jazz('Big Band Night', 17, { cost: 'CHF 30 - CHF 45', venues: ['Volkshaus'] }),
  jazz('Jazz Brunch', 24, { start: '11:00', end: '14:00', cost: 'CHF 45', tags: ['Wheelchair accessible'] }),
  { title: 'Beethoven Nine', description: 'The Ninth Symphony with the Tonhalle choir.', day: 6, start: '19:30', end: '21:30', cost: 'CHF 50 - CHF 120', featured: true, categories: ['Classical'], tags: ['Wheelchair accessible'], venues: ['Tonhalle'], organizers: ['Tonhalle Society'], language: 'en' },
  { title: 'Chamber Music at Noon', description: 'Forty minutes of string quartets in the small hall.', day: 13, start: '12:15', end: '12:55', cost: 'Free', categories: ['Classical'], tags: ['Free entry'], venues: ['Tonhalle'], organizers: ['Tonhalle Society'], language: 'en' },
  { title: 'Casablanca Under the Stars', description: 'Play it again, on the lawn.', day: 12, start: '21:00', end: '23:00', cost: 'CHF 19', categories: ['Film'], tags: ['Open air'], venues: ['Landiwiese'], organizers: ['Kino am See'], language: 'en' },
  { title: 'Silent Film with Live Piano', description: 'Buster Keaton, accompanied on the piano.', day: 19, start: '20:00', end: '21:30', cost: 'CHF 22', categories: ['Film', 'Music'], tags: [], venues: ['Rote Fabrik'], organizers: ['Kino am See'], language: 'en' },
  { title: 'Cabaret Evening', description: 'Songs and satire in three languages.', day: 8, start: '20:00', end: '22:15', cost: 'CHF 35', categories: ['Theatre'], tags: ['Late night'], venues: ['Rote Fabrik'], organizers: [], language: 'en' },
  { title: 'Modern Masters', description: 'Paintings from the collection, with a guided tour every Sunday.', day: 1, start: '10:00', end: '18:00', days: 60, allDay: true, cost: 'CHF 23', categories: ['Exhibitions'], tags: ['Wheelchair accessible'], venues: ['Kunsthaus'], organizers: [], language: 'en' },
  { title: 'Photography Now', description: 'Young photographers from Switzerland.', day: 15, start: '10:00', end: '18:00', days: 30, allDay: true, cost: 'Free', categories: ['Exhibitions'], tags: ['Free entry'], venues: ['Kunsthaus'], organizers: [], language: 'en' },
  { title: 'Lakeside Festival', description: 'A weekend of bands on the lawn.', day: 27, start: '14:00', end: '23:00', days: 1, cost: 'CHF 60', featured: true, categories: ['Music'], tags: ['Open air', 'Wheelchair accessible'], venues: ['Landiwiese'], organizers: ['Jazz Club Zürich'], language: 'en' },
  { title: "Members' Evening", description: 'Rehearsal visit and drinks for members of the Jazz Club.', excerpt: 'For members only.', day: 9, start: '19:00', end: '21:00', cost: 'Free', categories: ['Jazz'], tags: [], venues: ['Volkshaus'], organizers: ['Jazz Club Zürich'], language: 'en', password: 'members-only' },
  jazz('Späte Jazznacht', 3, { language: 'de', translationOf: 'Late Night Jazz', description: 'Zwei Sets Live-Jazz mit der Hausband und einem Gast.', categories: ['Musik'], tags: [], venues: ['Volkshaus Zürich'], organizers: ['Jazzclub Zürich'] }),
  { title: 'Kino am See', description: 'Filmklassiker auf grosser Leinwand am See, nach Sonnenuntergang.', day: 5, start: '21:15', end: '23:45', cost: 'CHF 19', categories: ['Film und Kino'], tags: ['Open Air'], venues: ['Rote Fabrik Zürich'], organizers: ['Kino am See Zürich'], language: 'de', translationOf: 'Open-Air Cinema' },
  { title: 'Jazz-Session', description: 'Offene Bühne für alle, die mitspielen wollen.', day: 10, start: '21:00', end: '23:30', cost: 'Gratis', categories: ['Musik'], tags: ['Eintritt frei'], venues: ['Volkshaus Zürich'], organizers: ['Jazzclub Zürich'], language: 'de', translationOf: 'Jam Session' },
  { title: 'Moderne Meister', description: 'Gemälde aus der Sammlung, sonntags mit Führung.', day: 1, start: '10:00', end: '18:00', days: 60, allDay: true, cost: 'CHF 23', categories: ['Ausstellungen'], tags: [], venues: ['Kunsthaus Zürich'], organizers: [], language: 'de', translationOf: 'Modern Masters' },
  { title: 'Casablanca unter Sternen', description: 'Spiel es noch einmal, auf der Wiese.', day: 12, start: '21:00', end: '23:00', cost: 'CHF 19', categories: ['Film und Kino'], tags: ['Open Air'], venues: ['Rote Fabrik Zürich'], organizers: ['Kino am See Zürich'], language: 'de', translationOf: 'Casablanca Under the Stars' },
  { title: 'Seefest', description: 'Ein Wochenende mit Bands auf der Wiese.', day: 27, start: '14:00', end: '23:00', days: 1, cost: 'CHF 60', categories: ['Musik'], tags: ['Open Air'], venues: ['Volkshaus Zürich'], organizers: ['Jazzclub Zürich'], language: 'de', translationOf: 'Lakeside Festival' },
  { title: 'Stummfilm mit Klavier', description: 'Buster Keaton, live am Klavier begleitet.', day: 19, start: '20:00', end: '21:30', cost: 'CHF 22', categories: ['Film und Kino', 'Musik'], tags: [], venues: ['Rote Fabrik Zürich'], organizers: ['Kino am See Zürich'], language: 'de', translationOf: 'Silent Film with Live Piano' },
  { title: 'Fotografie heute', description: 'Junge Fotografinnen und Fotografen aus der Schweiz.', day: 15, start: '10:00', end: '18:00', days: 30, allDay: true, cost: 'Gratis', categories: ['Ausstellungen'], tags: ['Eintritt frei'], venues: ['Kunsthaus Zürich'], organizers: [], language: 'de', translationOf: 'Photography Now' },
  { title: 'Jazz tard le soir', description: 'Deux sets de jazz en direct avec l’orchestre maison et un soliste invité.', day: 3, start: '21:00', end: '23:30', cost: 'CHF 25', categories: ['Musique'], tags: [], venues: ['Salle du Volkshaus'], organizers: ['Club de jazz de Zurich'], language: 'ch-fr', translationOf: 'Late Night Jazz' },
  { title: 'Cinéma en plein air', description: 'Des classiques sur grand écran au bord du lac, après le coucher du soleil.', day: 5, start: '21:15', end: '23:45', cost: 'CHF 19', categories: ['Cinéma'], tags: ['Plein air'], venues: ['Salle du Volkshaus'], organizers: ['Cinéma au bord du lac'], language: 'ch-fr', translationOf: 'Open-Air Cinema' },
  { title: 'Bœuf de jazz', description: 'Scène ouverte à toutes celles et ceux qui veulent jouer.', day: 10, start: '21:00', end: '23:30', cost: 'Gratuit', categories: ['Musique'], tags: ['Entrée libre'], venues: ['Salle du Volkshaus'], organizers: ['Club de jazz de Zurich'], language: 'ch-fr', translationOf: 'Jam Session' },
  { title: 'Cabaret à Vidy', description: 'Chansons et satire en trois langues.', day: 8, start: '20:00', end: '22:15', cost: 'CHF 35', categories: ['Théâtre'], tags: [], venues: ['Théâtre de Vidy'], organizers: [], language: 'ch-fr', translationOf: 'Cabaret Evening' },
  { title: 'Casablanca sous les étoiles', description: 'Rejouez-la, sur la pelouse.', day: 12, start: '21:00', end: '23:00', cost: 'CHF 19', categories: ['Cinéma'], tags: ['Plein air'], venues: ['Salle du Volkshaus'], organizers: ['Cinéma au bord du lac'], language: 'ch-fr', translationOf: 'Casablanca Under the Stars' },
  { title: 'Festival du lac', description: 'Un week-end de concerts sur la pelouse.', day: 27, start: '14:00', end: '23:00', days: 1, cost: 'CHF 60', categories: ['Musique'], tags: ['Plein air', 'Entrée libre'], venues: ['Salle du Volkshaus'], organizers: ['Club de jazz de Zurich'], language: 'ch-fr', translationOf: 'Lakeside Festival' },
  { title: 'Théâtre jeune public', description: 'Une pièce pour les enfants dès six ans.', day: 20, start: '15:00', end: '16:00', cost: 'CHF 12', categories: ['Théâtre'], tags: [], venues: ['Théâtre de Vidy'], organizers: [], language: 'ch-fr' },
  { title: 'Ciné-concert', description: 'Un film muet accompagné par un trio de jazz.', day: 19, start: '20:00', end: '21:30', cost: 'CHF 22', categories: ['Cinéma', 'Musique'], tags: [], venues: ['Salle du Volkshaus'], organizers: ['Cinéma au bord du lac'], language: 'ch-fr', translationOf: 'Silent Film with Live Piano' },
  // Recurring series, last so that the ids the contract's examples name stay as they are.
  { title: 'Swing Dance Class', description: 'Lindy hop for beginners, every week; no partner needed.', day: 2, start: '18:30', end: '20:00', cost: 'CHF 20', categories: ['Jazz'], tags: ['Wheelchair accessible'], venues: ['Volkshaus'], organizers: ['Jazz Club Zürich'], language: 'en', recurrence: { rule: 'FREQ=WEEKLY' } },
  jazz('Jazz Lovers Meetup', 0, { start: '19:00', end: '21:00', cost: 'Free', description: 'Records, talk and a drink, on the last Friday of every month.', tags: ['Free entry'], recurrence: { rule: 'FREQ=MONTHLY;BYDAY=-1FR', lastFriday: true } }),
  { title: 'Lake Parade Festival', description: 'Three days of music and boats on the lake, every summer.', day: 40, start: '10:00', end: '23:00', days: 2, allDay: true, cost: 'Free', categories: ['Music'], tags: ['Open air', 'Free entry'], venues: ['Landiwiese'], organizers: [], language: 'en', recurrence: { rule: 'FREQ=YEARLY', cancelledYear: 1 } },
]
