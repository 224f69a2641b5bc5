/**
 * Descriptions as plain text (iCalendar's DESCRIPTION, CONTRACT §14): event descriptions may hold HTML,
 * as The Events Calendar stores them (`<p>`, `<br>`, links, entities). html-to-text reads it as a
 * browser would lay it out: paragraphs and `<br>` as line breaks, a link as `text (url)` (just the url
 * when it is its own text), lists as ` * item`, entities decoded, images and scripts left out.
 *
 * Text without tags or entities is plain already and passes unchanged. HTML without block elements
 * (inline markup only, such as `<b>` or `&amp;`) keeps its own line breaks, as WordPress shows such
 * text (its paragraphs are made from the newlines); with block elements the markup alone decides.
 */
import { convert, type HtmlToTextOptions } from 'html-to-text'

const HEADINGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } }))

const OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  selectors: [
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true, linkBrackets: ['(', ')'] } },
    { selector: 'img', format: 'skip' },
    { selector: 'table', format: 'dataTable' },
    ...HEADINGS,
  ],
}
const INLINE_OPTIONS: HtmlToTextOptions = { ...OPTIONS, preserveNewlines: true }

const MARKUP = /<[a-z!/?]|&(?:[a-z][a-z0-9]*|#\d+|#x[0-9a-f]+);/i
const BLOCK = /<(?:p|br|div|li|ul|ol|h[1-6]|table|tr|blockquote|pre|hr)\b/i

/** `text` as plain text: HTML converted, plain text as it is. */
export function plainText(text: string): string {
  if (!MARKUP.test(text)) return text
  return convert(text, BLOCK.test(text) ? OPTIONS : INLINE_OPTIONS).replace(/\n{3,}/g, '\n\n').trim()
}
