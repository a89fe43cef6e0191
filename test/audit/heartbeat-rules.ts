import t, { type Test } from 'tap'
import { audit, completeTrace, found, heartbeat, member, registered, trace, type Case } from './fixtures.js'

function check(t: Test, rule: Parameters<typeof found>[1], cases: [string, Case, string[], string?][]) {
  for (const [name, c, expected, names] of cases) {
    const result = audit(c)
    const findings = result.findings.filter((item) => item.rule === rule)
    t.strictSame(found(result, rule), expected, name)
    for (const finding of findings) t.equal(finding.severity, 'contradiction', name)
    if (names !== undefined) t.match(findings[0]?.detail, `heartbeat ${names} `, `${name}: names heartbeat ${names}`)
  }
}

t.test('file-count-mismatch: the last finished heartbeat of the site against the registered member', async (t) => {
  const files = (n: number) => [registered('baseband', { num_files: n })]
  const at = 'data_registration@chime'
  check(t, 'file-count-mismatch', [
    ['the finished heartbeat counts other files', { datatrail: files(10), heartbeats: [heartbeat(1, 'chime', { files: 12 })] }, [at], '1'],
    ['agreement', { datatrail: files(12), heartbeats: [heartbeat(1, 'chime', { files: 12 })] }, []],
    [
      'the highest heartbeat_id decides, whatever the order given',
      { datatrail: files(12), heartbeats: [heartbeat(7, 'chime', { files: 12 }), heartbeat(3, 'chime', { files: 9 })] },
      []
    ],
    [
      'an older heartbeat that disagrees proves nothing',
      { datatrail: files(12), heartbeats: [heartbeat(2, 'chime', { files: 5 }), heartbeat(4, 'chime', { files: 12 })] },
      []
    ],
    [
      'the newest finished one is named',
      { datatrail: files(5), heartbeats: [heartbeat(2, 'chime', { files: 5 }), heartbeat(4, 'chime', { files: 12 })] },
      [at],
      '4'
    ],
    [
      'an unfinished heartbeat is not used, even with the highest id',
      { datatrail: files(12), heartbeats: [heartbeat(4, 'chime', { files: 12 }), heartbeat(9, 'chime', { files: 3, finished: false })] },
      []
    ],
    ['no finished heartbeat: no finding', { datatrail: files(12), heartbeats: [heartbeat(9, 'chime', { files: 3, finished: false })] }, []],
    ['no heartbeat at all', { datatrail: files(12) }, []],
    ['the member not registered', { datatrail: [member('baseband', { registered: false, num_files: 10 })], heartbeats: [heartbeat(1, 'chime', { files: 12 })] }, []],
    ['a missing member is not registered', { heartbeats: [heartbeat(1, 'chime', { files: 12 })] }, []],
    [
      "another site's heartbeat is not this site's",
      { datatrail: files(12), heartbeats: [heartbeat(1, 'chime', { files: 12 }), heartbeat(8, 'kko', { files: 3 })] },
      []
    ],
    [
      'each requested site against its own member and heartbeats',
      {
        want: { baseband: true, gbo_baseband: true },
        datatrail: [registered('baseband', { num_files: 12 }), registered('gbo_baseband', { num_files: 2 })],
        heartbeats: [heartbeat(1, 'chime', { files: 12 }), heartbeat(8, 'gbo', { files: 3 })]
      },
      ['data_registration@gbo'],
      '8'
    ],
    [
      'a site not requested',
      { want: { baseband: true }, datatrail: [registered('baseband'), registered('kko_baseband', { num_files: 1 })], heartbeats: [heartbeat(8, 'kko', { files: 3 })] },
      []
    ]
  ])
})

t.test('heartbeat-error: conversion complete at the site, yet one of its heartbeats reports an error', async (t) => {
  const converted = trace({ 'baseband_callback_request@chime': 'complete', 'baseband_conversion@chime': 'complete' })
  const at = 'baseband_conversion@chime'
  check(t, 'heartbeat-error', [
    ['an error', { trace: converted, heartbeats: [heartbeat(3, 'chime', { error: 'disk full' })] }, [at], '3'],
    [
      'one finding naming the newest such heartbeat',
      { trace: converted, heartbeats: [heartbeat(7, 'chime', { error: 'late' }), heartbeat(9, 'chime'), heartbeat(3, 'chime', { error: 'disk full' })] },
      [at],
      '7'
    ],
    ['unfinished heartbeats count too', { trace: converted, heartbeats: [heartbeat(3, 'chime', { error: 'x', finished: false })] }, [at], '3'],
    ['not_required conversion is complete', { trace: trace({ 'baseband_conversion@chime': 'not_required' }), heartbeats: [heartbeat(3, 'chime', { error: 'x' })] }, [at]],
    ['an empty error is no error', { trace: converted, heartbeats: [heartbeat(3, 'chime', { error: '' })] }, []],
    ['a null error is no error', { trace: converted, heartbeats: [heartbeat(3, 'chime', { error: null })] }, []],
    ['conversion incomplete', { trace: trace({}), heartbeats: [heartbeat(3, 'chime', { error: 'disk full' })] }, []],
    ['a missing trace', { trace: null, heartbeats: [heartbeat(3, 'chime', { error: 'disk full' })] }, []],
    ["another site's heartbeat", { trace: converted, heartbeats: [heartbeat(3, 'kko', { error: 'disk full' })] }, []],
    [
      'at the site whose heartbeat it is',
      { want: { baseband: true, kko_baseband: true }, trace: completeTrace('chime', 'kko'), heartbeats: [heartbeat(3, 'kko', { error: 'disk full' })] },
      ['baseband_conversion@kko'],
      '3'
    ],
    ['a site not requested', { want: { baseband: true }, trace: completeTrace('chime', 'kko'), heartbeats: [heartbeat(3, 'kko', { error: 'disk full' })] }, []]
  ])
})
