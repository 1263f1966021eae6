import {expect} from 'chai'

import {formatAge, formatBytes} from '../../../src/core/kernel/units.js'

describe('sizes and ages for people', () => {
  it('formatBytes: IEC units, one decimal below 10', () => {
    expect(
      [0, 512, 1024, 1536, 26 * 1024 + 100, 10 * 1024 - 20, 5 * 1_048_576, 3.25 * 1_073_741_824].map(formatBytes),
    ).to.deep.equal(['0 B', '512 B', '1 KiB', '1.5 KiB', '26 KiB', '10 KiB', '5 MiB', '3.3 GiB'])
  })

  it('formatAge: the largest whole unit', () => {
    expect([-5, 0, 37_000, 60_000, 3_599_000, 3_600_000, 86_400_000 * 3].map(formatAge)).to.deep.equal([
      '0s',
      '0s',
      '37s',
      '1m',
      '59m',
      '1h',
      '3d',
    ])
  })
})
