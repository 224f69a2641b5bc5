/** The README's examples as the tests run them: the ```sh blocks of its "The story" section, in order. */
import { readFileSync } from 'node:fs'

export const README_API = 'http://127.0.0.1:3000/calendar/events/v1'

export function readmeExamples(readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')): string[] {
  const start = readme.indexOf('\n## The story\n')
  if (start === -1) throw new Error('README.md has no "## The story" section')
  const end = readme.indexOf('\n## ', start + 1)
  const section = readme.slice(start, end === -1 ? undefined : end)
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '')
}
