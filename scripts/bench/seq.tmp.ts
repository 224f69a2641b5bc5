import { realScenarios, sampleData } from './scenarios.js'
const NOW = new Date()
const s = sampleData('/tmp/bench-pg-search/bench-20000.db', 20000, NOW)
const sc = realScenarios(s, 'k', NOW).find((x) => x.key === 'random-search')!
const seen = new Set<string>()
for (const total of [1000, 2000, 4000, 8000]) {
  let newPair = 0, newTriple = 0, newWord = 0, pairs = 0, triples = 0, words = 0
  seen.clear()
  const sc2 = realScenarios(s, 'k', NOW).find((x) => x.key === 'random-search')!
  for (let i = 0; i < total; i++) {
    const needle = new URL('http://x' + sc2.next().path).searchParams.get('search')!
    const fresh = !seen.has(needle); seen.add(needle)
    if (/^[a-z]{2}$/.test(needle)) { pairs++; if (fresh) newPair++ } else if (/^[a-z]{3}$/.test(needle) ) { triples++; if (fresh) newTriple++ } else { words++; if (fresh) newWord++ }
  }
  console.log(total, { pairs, newPair, triples, newTriple, words, newWord })
}
