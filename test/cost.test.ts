import t from 'tap';
import { costDetails, type CostDetails } from '../src/lib/cost.js';

/** Shorthand for an expected result. */
function details(
  currency_symbol: string | null,
  currency_code: string | null,
  currency_position: CostDetails['currency_position'],
  values: number[],
): CostDetails {
  return { currency_symbol, currency_code, currency_position, values };
}

const NONE = details(null, null, null, []);
const FREE = details(null, null, null, [0]);

t.test('nothing to read', async (t) => {
  t.same(costDetails(null), NONE);
  t.same(costDetails(''), NONE);
  t.same(costDetails('   '), NONE);
  t.same(costDetails('TBA'), NONE);
  t.same(costDetails('Donation welcome'), NONE);
  t.same(costDetails('$'), NONE, 'a symbol without a number is not next to one');
  t.same(costDetails('EUR'), details(null, 'EUR', null, []), 'a code without a number has no position');
});

t.test('free words give [0] when there is no number', async (t) => {
  const words = ['Free', 'free', 'FREE', 'Free entry', 'Gratis', 'gratis', 'Kostenlos', 'kostenfrei', 'Eintritt frei',
    'Gratuit', 'Entrée gratuite', 'Entrée libre', 'Entrada gratuita', 'Entrada libre', 'Ingresso gratuito', 'umsonst'];
  t.same(words.map((w) => [w, costDetails(w)]), words.map((w) => [w, FREE]));
  t.same(costDetails('Freedom'), NONE, 'only whole words');
  t.same(costDetails('Free – $20'), details('$', null, 'prefix', [20]), 'a number wins over the free word');
  t.same(costDetails('Kids free, adults 10 €'), details('€', null, 'postfix', [10]));
});

t.test('the reference formats', async (t) => {
  t.same(costDetails('$23'), details('$', null, 'prefix', [23]));
  t.same(costDetails('$10 – $20'), details('$', null, 'prefix', [10, 20]));
  t.same(costDetails('$10 - $20'), details('$', null, 'prefix', [10, 20]));
  t.same(costDetails('$20 – $10'), details('$', null, 'prefix', [10, 20]), 'ascending');
  t.same(costDetails('10'), details(null, null, null, [10]));
  t.same(costDetails('10 20 10'), details(null, null, null, [10, 20]), 'unique');
});

t.test('number notations', async (t) => {
  const cases: [string, number[]][] = [
    ['1,000.50', [1000.5]],
    ['1.000,50', [1000.5]],
    ['1,000', [1000]],
    ['1.000', [1000]],
    ['1.000.000', [1000000]],
    ['1,000,000.25', [1000000.25]],
    ['1.000.000,25', [1000000.25]],
    ["1'000.50", [1000.5]],
    ['1’000', [1000]],
    ['1 000', [1000]],
    ['1\u00A0000,50', [1000.5]],
    ['1\u202F000', [1000]],
    ['10,50', [10.5]],
    ['10.5', [10.5]],
    ['0.500', [0.5]],
    ['0,75', [0.75]],
    ['12.3456', [12.3456]],
    ['10,20,30', [10, 20, 30]],
    ['1.2.3', [1, 2, 3]],
    ['10 20', [10, 20]],
    ['10-20', [10, 20]],
    ['10–20', [10, 20]],
    ['10—20', [10, 20]],
    ['10/15/20', [10, 15, 20]],
    ['007', [7]],
    ['25.–', [25]],
    ['25,-', [25]],
    ['12.5%', [12.5]],
    ['2 for 1', [1, 2]],
  ];
  t.same(cases.map(([text]) => [text, costDetails(text).values]), cases);
});

t.test('symbols, codes and positions', async (t) => {
  const cases: [string, CostDetails][] = [
    ['10,50 €', details('€', null, 'postfix', [10.5])],
    ['€10,50', details('€', null, 'prefix', [10.5])],
    ['€ 10 – € 20', details('€', null, 'prefix', [10, 20])],
    ['10 € – 20 €', details('€', null, 'postfix', [10, 20])],
    ['25,- €', details('€', null, 'postfix', [25])],
    ['€10–€20, students €5', details('€', null, 'prefix', [5, 10, 20])],
    ['Adults 20 €, kids € 10', details('€', null, 'postfix', [10, 20])],
    ['10-20 EUR', details(null, 'EUR', 'postfix', [10, 20])],
    ['EUR 10-20', details(null, 'EUR', 'prefix', [10, 20])],
    ['10EUR', details(null, 'EUR', 'postfix', [10])],
    ['CHF 25.–', details(null, 'CHF', 'prefix', [25])],
    ["CHF 1'250.–", details(null, 'CHF', 'prefix', [1250])],
    ['25.– CHF', details(null, 'CHF', 'postfix', [25])],
    ['Fr. 25.–', details('Fr.', null, 'prefix', [25])],
    ['25 Fr.', details('Fr.', null, 'postfix', [25])],
    ['$10 USD', details('$', 'USD', 'prefix', [10])],
    ['USD 10 ($)', details(null, 'USD', 'prefix', [10])],
    ['US$ 5', details('US$', null, 'prefix', [5])],
    ['A$30', details('A$', null, 'prefix', [30])],
    ['R$ 50,00', details('R$', null, 'prefix', [50])],
    ['£7.50 - £12', details('£', null, 'prefix', [7.5, 12])],
    ['¥1,000', details('¥', null, 'prefix', [1000])],
    ['₹ 500', details('₹', null, 'prefix', [500])],
    ['₣ 20', details('₣', null, 'prefix', [20])],
    ['100 kr', details('kr', null, 'postfix', [100])],
    ['100 kr.', details('kr.', null, 'postfix', [100])],
    ['Krakow 10', details(null, null, null, [10])],
    ['50 zł', details('zł', null, 'postfix', [50])],
    ['1 000 €', details('€', null, 'postfix', [1000])],
    ['Entry: € 12 (EUR)', details('€', 'EUR', 'prefix', [12])],
    ['From 5 to 10 EUR (kids free)', details(null, 'EUR', 'postfix', [5, 10])],
    ['EUR: 15', details(null, 'EUR', 'prefix', [15])],
    ['ALL AGES $5', details('$', null, 'prefix', [5])],
    ['ALL AGES 5', details(null, null, null, [5])],
    ['TOP seats 50', details(null, null, null, [50])],
    ['50 TRY', details(null, 'TRY', 'postfix', [50])],
    ['XYZ 10', details(null, null, null, [10])],
    ['eur 10', details(null, null, null, [10])],
    ['EURO 10', details(null, null, null, [10])],
    ['20 GBP / 25 EUR', details(null, 'GBP', 'postfix', [20, 25])],
  ];
  t.same(cases.map(([text]) => [text, costDetails(text)]), cases);
});

t.test('result shape', async (t) => {
  t.same(Object.keys(costDetails('$5')), ['currency_symbol', 'currency_code', 'currency_position', 'values']);
  t.ok(costDetails('1,000.50').values.every((v) => typeof v === 'number'), 'values are numbers');
  t.same(costDetails('9'.repeat(400)).values, [], 'a number too large for a double is dropped');
});
