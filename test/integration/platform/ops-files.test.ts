/**
 * Issue 47: the alert rules (ops/prometheus/alerts.yml, unit-tested by promtool in
 * `npm run lint:alerts`) and the Grafana dashboard (ops/grafana/escrow-operations.json) read
 * only figures /metrics exposes, so a renamed metric cannot leave an alert that never fires
 * or a panel that stays empty; every alert has a section in docs/operations.md.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { registry } from '../../../shared/metrics.js';

const METRIC = /\b[a-z][a-z0-9_]*_(?:seconds|total|rows|jobs|disabled|differences|bucket|ok)\b/g;

async function exposed(): Promise<Set<string>> {
  const names = new Set<string>();
  for (const m of await registry.getMetricsAsJSON()) {
    names.add(m.name);
    if (String(m.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${m.name}${suffix}`);
  }
  return names;
}

describe('ops files read what /metrics exposes (issue 47)', () => {
  it('every metric the alert rules and the dashboard name is on /metrics', async () => {
    const names = await exposed();
    const alerts = readFileSync('ops/prometheus/alerts.yml', 'utf8');
    const dashboard = JSON.parse(readFileSync('ops/grafana/escrow-operations.json', 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
    const exprs = [...alerts.split('\n').filter((l) => l.trim().startsWith('expr:')), ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr))];
    const named = new Set(exprs.flatMap((e) => e.match(METRIC) ?? []));
    expect(named.size).to.be.greaterThan(8);
    for (const name of named) expect(names.has(name), `${name} is not on /metrics`).to.equal(true);
    expect(dashboard.panels.every((p) => p.targets.length > 0)).to.equal(true);
  });

  it('every alert has its section in docs/operations.md', () => {
    const alerts = readFileSync('ops/prometheus/alerts.yml', 'utf8');
    const doc = readFileSync('docs/operations.md', 'utf8');
    const names = [...alerts.matchAll(/- alert: (\w+)/g)].map((m) => m[1]!);
    expect(names).to.have.length.greaterThan(5);
    for (const name of names) {
      expect(doc, name).to.include(`### ${name}`);
      expect(alerts, name).to.include(`runbook: "docs/operations.md#${name.toLowerCase()}"`);
    }
  });
});
