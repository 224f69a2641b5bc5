/**
 * The parsed contract the build caches (dist/contract.json, read at startup instead of the YAML) is
 * the YAML's own parse and survives JSON; the one on disk was made from the YAML on disk.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { CONTRACT_CACHE_URL, contractCache, loadSpec } from '../src/http/spec.js'

t.test('the cache holds exactly what parsing the YAML gives, and survives JSON', async (t) => {
  const cache = contractCache()
  const loaded = loadSpec()
  t.strictSame(loaded.document, cache.document, 'loadSpec() gives the parsed YAML, from the cache or not')
  t.strictSame(loaded.packs, cache.packs)
  t.strictSame(JSON.parse(JSON.stringify(cache)), cache)
  t.match(cache.sha256, /^[0-9a-f]{64}$/)
})

t.test('the built cache, when present, was made from the YAML on disk', async (t) => {
  let onDisk: { sha256?: string } | undefined
  try {
    onDisk = JSON.parse(readFileSync(CONTRACT_CACHE_URL, 'utf8')) as { sha256?: string }
  } catch {
    onDisk = undefined
  }
  // `npm test` builds first, so the cache is there and current; a run without a build has none.
  if (onDisk !== undefined) t.equal(onDisk.sha256, contractCache().sha256, 'the built cache matches the YAML on disk')
  const { document } = loadSpec()
  t.equal((document.info as { title?: unknown }).title, (contractCache().document.info as { title?: unknown }).title)
})
