/**
 * How this site writes its records: the base of every `rest_url`, whether venues show their coordinates
 * (the `geoloc` extension) and the site time zone that `date` and `modified` are shown in. Record reads take
 * it after `db`; writes never need it.
 */
export interface Site {
  /** `{base_url}/calendar/events/v1`, the prefix of every `rest_url`. */
  readonly apiUrl: string
  geoloc: boolean
  /** `CALENDAR_TIMEZONE`. */
  timeZone: string
}
