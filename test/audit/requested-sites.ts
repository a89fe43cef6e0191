import t from 'tap'
import { requestedSites } from '../../src/domain/audit/requested-sites.js'
import { siteModel } from '../../src/vocabulary.js'
import { audit, completeTrace, found, HOUR, registered, SITES } from './fixtures.js'

t.test('requested sites: the primary for `baseband`, others for `{site}_baseband`, configured order', async (t) => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['baseband asks for the primary site', { baseband: true }, ['chime']],
    ['{site}_baseband asks for that site', { kko_baseband: true }, ['kko']],
    ['configured order, not the order of the flags', { hco_baseband: true, baseband: true, kko_baseband: true }, ['chime', 'kko', 'hco']],
    ['false asks for nothing', { baseband: false, gbo_baseband: false }, []],
    ['intensity alone asks for no site', { intensity: true }, []],
    ['an unconfigured {site}_baseband asks for nothing', { drao_baseband: true }, []],
    ['chime_baseband is not how the primary site is asked for', { chime_baseband: true }, []],
    ['only boolean true asks (other writers)', { baseband: 'true', kko_baseband: 1 }, []]
  ]
  for (const [name, want, sites] of cases) {
    t.strictSame(requestedSites({ want, got: {} } as never, SITES), sites, name)
  }
  t.strictSame(requestedSites(null as never, SITES), [], 'no actions at all')
  t.strictSame(requestedSites({ want: { gbo_baseband: true }, got: {} }, siteModel(['chime', 'kko'])), [], 'gbo is not configured here')
})

t.test('the datatrail member of a site is `baseband` at the primary site, `{site}_baseband` elsewhere', async (t) => {
  t.strictSame(
    SITES.names.map((site) => SITES.basebandKeyOf(site)),
    ['baseband', 'kko_baseband', 'gbo_baseband', 'hco_baseband']
  )
  t.equal(siteModel(['kko', 'chime']).basebandKeyOf('kko'), 'baseband', 'the primary is whichever site is configured first')
})

t.test('sites not requested are not audited, whatever their trace says', async (t) => {
  const result = audit({ want: { kko_baseband: true }, trace: completeTrace('kko'), datatrail: [registered('kko_baseband')], after: 100 * HOUR })
  t.strictSame(result.sites, ['kko'])
  t.strictSame(result.findings, [], 'chime, gbo and hco are empty in the trace yet not stuck')
  t.equal(result.verdict, 'complete')

  const none = audit({ want: { drao_baseband: true }, trace: null, after: 100 * HOUR })
  t.strictSame(none.sites, [], 'nothing requested: callers refuse the event')
  t.strictSame(found(none, 'stuck'), ['tsar_classification'], 'only the classification has a stage to audit')
})
