import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { runtimeWarning, SUPPORTED_NODE_MAJOR } from '../../../shared/runtime.js';

describe('runtime: the supported Node.js line (issue 45)', () => {
  it('warns on Node 20 (end of life) and 22, not on 24 or newer', () => {
    expect(runtimeWarning('20.20.2')).to.match(/not supported.*end of life/);
    expect(runtimeWarning('22.12.0')).to.match(/not supported/).and.not.match(/end of life/);
    expect(runtimeWarning('24.22.3')).to.equal(undefined);
    expect(runtimeWarning('26.1.0')).to.equal(undefined);
  });

  it('.nvmrc, engines and scripts/node-lts.sh name the same line', () => {
    const nvmrc = readFileSync('.nvmrc', 'utf8').trim();
    const engines = (JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines.node;
    const script = readFileSync('scripts/node-lts.sh', 'utf8');
    expect(nvmrc).to.equal(String(SUPPORTED_NODE_MAJOR));
    expect(engines).to.equal(`>=${SUPPORTED_NODE_MAJOR}`);
    expect(script).to.match(new RegExp(`^VERSION=${SUPPORTED_NODE_MAJOR}\\.\\d+\\.\\d+$`, 'm'));
  });
});
