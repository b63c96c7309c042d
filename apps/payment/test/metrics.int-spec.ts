import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { waitFor } from '@checkout/testing';
import { PaymentMetrics } from '../src/payment/payment.metrics';
import { PAYMENT_INTERNAL } from './payment-stack';

describe('payment: /metrics', () => {
  it('exports every payment metric, and the stuck gauges for each open state', async () => {
    const registry = new Registry();
    new PaymentMetrics(registry);
    const names = registry.getMetricsAsArray().map((m) => m.name);
    assert.ok(names.length >= 11);
    const text = await (await fetch(`${PAYMENT_INTERNAL}/metrics`)).text();
    for (const name of names) assert.match(text, new RegExp(`^# HELP ${name} `, 'm'), name);
    // Read from the database when /metrics is scraped.
    await waitFor('stuck gauges of created, pending and unknown', async () => {
      const t = await (await fetch(`${PAYMENT_INTERNAL}/metrics`)).text();
      return ['created', 'pending', 'unknown'].every((s) =>
        new RegExp(`^payment_stuck_oldest_seconds\\{state="${s}"`, 'm').test(t),
      )
        ? t
        : undefined;
    });
  });
});
