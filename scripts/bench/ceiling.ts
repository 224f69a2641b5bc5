/**
 * The benchmark's ceilings: a bare fastify process (no logger, no schema, no hooks, no database)
 * - `GET /event`: one constant object shaped like an event record (about 2 KB of JSON), serialized per
 *   request (the *object* ceiling, the benchmark's first);
 * - `GET /bytes`: a constant, already-serialized body (the file BODY_FILE: an event as the API answers it,
 *   so of the same size), sent as bytes (the *bytes* ceiling, issue 49: the physical one, what the
 *   realistic targets are ratios of).
 * Whatever the real API reaches is compared with what this reaches on the same machine in the same run.
 *
 * PORT (default 0) and HOST (default 127.0.0.1); prints `listening on <url>` once ready; stops on SIGTERM.
 */
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'

const base = 'http://127.0.0.1:3000/calendar/events/v1'
const details = (y: number, mo: number, d: number, h: number) => ({ year: y, month: mo, day: d, hour: h, minutes: 0, seconds: 0 })

const EVENT = {
  id: 4711,
  global_id: '127.0.0.1:3000?id=4711',
  author: 3,
  status: 'publish',
  date: '2026-09-17 00:00:00',
  date_utc: '2026-09-17 00:00:00',
  modified: '2026-10-01 00:00:00',
  modified_utc: '2026-10-01 00:00:00',
  rest_url: `${base}/events/4711`,
  title: 'Late Night Jazz Concert',
  description: 'Late Night Jazz Concert at the Upper Studio. Join us for an evening of music and conversation with local artists; doors open one hour before.',
  excerpt: null,
  slug: 'late-night-jazz-concert-4711',
  image: { id: 17, url: 'https://images.example.org/events/17.jpg' },
  all_day: false,
  start_date: '2027-03-05 20:00:00',
  start_date_details: details(2027, 3, 5, 20),
  end_date: '2027-03-05 23:00:00',
  end_date_details: details(2027, 3, 5, 23),
  utc_start_date: '2027-03-05 20:00:00',
  utc_start_date_details: details(2027, 3, 5, 20),
  utc_end_date: '2027-03-05 23:00:00',
  utc_end_date_details: details(2027, 3, 5, 23),
  timezone: 'UTC',
  timezone_abbr: 'UTC',
  cost: '€ 15',
  cost_details: { currency_symbol: '€', currency_code: null, currency_position: 'prefix', values: [15] },
  website: 'https://events.example.org/4711',
  show_map: true,
  show_map_link: true,
  hide_from_listings: false,
  sticky: false,
  featured: false,
  categories: [{
    id: 1, name: 'Concerts', slug: 'concerts', description: null, parent: 0, count: 371, rest_url: `${base}/categories/1`,
    urls: { self: `${base}/categories/1`, collection: `${base}/categories` }, ml_language: 'en', translations: { en: 1, de: 51 },
  }],
  tags: [],
  venue: [{
    id: 46, author: 5, status: 'publish', date: '2015-10-05 00:00:00', date_utc: '2015-10-05 00:00:00', modified: '2016-04-26 00:00:00',
    modified_utc: '2016-04-26 00:00:00', rest_url: `${base}/venues/46`, venue: 'Upper Studio', description: null, slug: 'upper-studio',
    image: null, address: '38 Market Square', city: 'Bern', country: 'Switzerland', province: 'BE', state: 'BE', zip: '3011',
    phone: '+41 31 298 17 12', website: null, stateprovince: 'BE', show_map: true, show_map_link: true, geo_lat: null, geo_lng: null,
    ml_language: 'en', translations: { en: 46 },
  }],
  organizer: [],
  ml_language: 'en',
  translations: { en: 4711 },
}

async function main(): Promise<void> {
  const app = Fastify({ logger: false })
  app.get('/event', async () => EVENT)
  const file = process.env.BODY_FILE
  const body = file === undefined || file === '' ? Buffer.from(JSON.stringify(EVENT)) : readFileSync(file)
  app.get('/bytes', (_request, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8').send(body)
  })
  const host = process.env.HOST ?? '127.0.0.1'
  const port = Number(process.env.PORT ?? '0')
  const address = await app.listen({ host, port })
  process.stdout.write(`listening on ${address}\n`)
  const stop = () => {
    app.close().then(() => process.exit(0), () => process.exit(1))
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
