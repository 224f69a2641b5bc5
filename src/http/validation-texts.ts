/**
 * Corrections to ajv-i18n's texts (4.2). Its Spanish says "deber ser" and "és", writes "patron" and
 * "1 caracter" and marks item numbers "##"; its French writes "élémént"; its German says "muss sein:
 * integer" and "valides Element"; and Spanish and French leave the discriminator and unevaluated-*
 * findings in English. Validation findings are shown to API users in `data.params` and `data.details`,
 * so the texts that are wrong are written here, by keyword, after ajv-i18n has run.
 */

type Params = Record<string, unknown>

/** What the message of a finding should say, where ajv-i18n's text is wrong; `undefined` keeps its text. */
type Correction = (params: Params) => string | undefined

const plural = (n: unknown, one: string, many: string): string => (Number(n) === 1 ? one : many)
const text = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value))

const SPANISH: Record<string, Correction> = {
  enum: () => 'debe ser igual a uno de los valores predefinidos',
  'false schema': () => 'el esquema es falso',
  propertyNames: () => 'el nombre de la propiedad no es válido',
  pattern: (p) => `debe coincidir con el patrón "${text(p.pattern)}"`,
  maxLength: (p) => `no debe contener más de ${text(p.limit)} ${plural(p.limit, 'carácter', 'caracteres')}`,
  minLength: (p) => `no debe contener menos de ${text(p.limit)} ${plural(p.limit, 'carácter', 'caracteres')}`,
  uniqueItems: (p) => `no debe contener elementos duplicados (los elementos n.º ${text(p.j)} y ${text(p.i)} son idénticos)`,
  unevaluatedItems: (p) => `no debe tener más de ${text(p.len)} ${plural(p.len, 'elemento', 'elementos')}`,
  unevaluatedProperties: () => 'no debe tener propiedades no evaluadas',
  discriminator: (p) => (p.error === 'mapping'
    ? `el valor de la etiqueta "${text(p.tag)}" debe estar en oneOf`
    : `la etiqueta "${text(p.tag)}" debe ser una cadena`),
}

const FRENCH: Record<string, Correction> = {
  additionalItems: (p) => `ne doit pas contenir plus de ${text(p.limit)} ${plural(p.limit, 'élément', 'éléments')}`,
  items: (p) => (p.limit === undefined ? undefined : `ne doit pas contenir plus de ${text(p.limit)} ${plural(p.limit, 'élément', 'éléments')}`),
  uniqueItems: (p) => `ne doit pas contenir de doublons (les éléments n° ${text(p.j)} et ${text(p.i)} sont identiques)`,
  unevaluatedItems: (p) => `ne doit pas contenir plus de ${text(p.len)} ${plural(p.len, 'élément', 'éléments')}`,
  unevaluatedProperties: () => 'ne doit pas contenir de propriétés non évaluées',
  discriminator: (p) => (p.error === 'mapping'
    ? `la valeur de l'étiquette "${text(p.tag)}" doit figurer dans oneOf`
    : `l'étiquette "${text(p.tag)}" doit être une chaîne`),
}

const GERMAN: Record<string, Correction> = {
  type: (p) => `muss vom Typ ${text(p.type)} sein`,
  contains: () => 'muss ein gültiges Element enthalten',
}

const CORRECTIONS = { es: SPANISH, fr: FRENCH, de: GERMAN }

/** Rewrites, in place, the messages ajv-i18n's `base` language got wrong. */
export function correctValidationTexts(base: keyof typeof CORRECTIONS, errors: Array<{ keyword?: string; message?: string; params?: unknown }>): void {
  const table = CORRECTIONS[base]
  for (const error of errors) {
    const correct = error.keyword === undefined ? undefined : table[error.keyword]
    const params = typeof error.params === 'object' && error.params !== null ? (error.params as Params) : {}
    const message = correct?.(params)
    if (message !== undefined) error.message = message
  }
}
