/**
 * How this site writes its records: the base of every `rest_url` and whether venues show their
 * coordinates (the `geoloc` extension). Record reads take it after `db`; writes never need it.
 */
export interface Site {
  /** `{base_url}/calendar/events/v1`, the prefix of every `rest_url`. */
  readonly apiUrl: string
  geoloc: boolean
}
