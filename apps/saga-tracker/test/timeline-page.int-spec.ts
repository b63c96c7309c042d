import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserContext, chromium } from 'playwright-core';
import { REPO_ROOT } from '@checkout/local-stack';
import { SagaViewBody } from '../src/cli/saga-api.client';
import { ACME_KEY, TRACKER_URL, checkout, waitForSaga } from './support';

/** Screenshots land here (gitignored), for a person to look at after a run. */
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts', 'saga-tracker');
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** The page's colour of compensations (--compensation in its styles). */
const COMPENSATION_RED = 'rgb(207, 34, 46)';

describe('the timeline page in a real browser', () => {
  let context: BrowserContext;
  let userDataDir: string;
  let saga: SagaViewBody;

  beforeAll(async () => {
    const orderId = await checkout('tok_decline');
    saga = await waitForSaga(orderId, 'ended', (s) => s.state.terminal);
    userDataDir = mkdtempSync(join(tmpdir(), 'saga-page-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: CHROMIUM_ARGS,
    });
  });
  afterAll(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  it('shows a declined checkout as lanes and steps in order, compensations marked, and its status', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`${TRACKER_URL}/sagas/${saga.orderId}#key=${ACME_KEY}`);

    const status = page.locator('#saga-status');
    await status.waitFor({ timeout: 15_000 });
    assert.equal(await status.textContent(), 'CANCELLED');
    assert.match((await page.locator('#saga-ended').textContent()) ?? '', /^ended after/);
    assert.equal(await page.locator('#saga-order-id').textContent(), saga.orderId);
    assert.ok(!page.url().includes(ACME_KEY), 'the key is taken out of the address bar');

    const lanes = await page
      .locator('#sequence [data-lane]')
      .evaluateAll((gs) => gs.map((g) => [g.getAttribute('data-lane'), g.textContent]));
    assert.deepEqual(lanes, [
      ['order', 'order'],
      ['inventory', 'inventory'],
      ['payment', 'payment'],
      ['fulfillment', 'fulfillment'],
    ]);

    const steps = await page.locator('#sequence [data-step]').evaluateAll((gs) =>
      gs.map((g) => ({
        type: g.getAttribute('data-type'),
        lane: g.getAttribute('data-service'),
        outcome: g.getAttribute('data-outcome'),
        label: g.querySelector('.step-label')?.textContent ?? '',
        stroke: g.ownerDocument.defaultView!.getComputedStyle(g.querySelector('.arrow')!).stroke,
        y: Number(g.querySelector('circle')?.getAttribute('cy')),
      })),
    );
    assert.deepEqual(
      steps.map((s) => s.type),
      saga.timeline.map((s) => s.type),
      'the diagram draws the steps in the order of the timeline',
    );
    assert.deepEqual(
      steps.map((s) => s.lane),
      saga.timeline.map((s) => s.service),
    );
    assert.ok(
      steps.every((s, i) => i === 0 || s.y > steps[i - 1].y),
      'each step is drawn below the one before',
    );
    const compensations = steps.filter((s) => s.outcome === 'compensation');
    assert.deepEqual(compensations.map((s) => s.type).sort(), ['inventory.released', 'order.cancelled']);
    for (const s of compensations) {
      assert.match(s.label, /↺ compensation/, `${s.type} says it is a compensation`);
      assert.equal(s.stroke, COMPENSATION_RED, `${s.type} is drawn in the compensation colour`);
    }
    for (const s of steps.filter((x) => x.outcome !== 'compensation')) {
      assert.doesNotMatch(s.label, /compensation/);
      assert.notEqual(s.stroke, COMPENSATION_RED, `${s.type} is not drawn as a compensation`);
    }
    assert.match(steps[0].label, /^\+0\.000s order\.created/);

    const rows = await page
      .locator('#steps li')
      .evaluateAll((lis) =>
        lis.map((li) => [li.getAttribute('data-type'), li.querySelector('.badge')?.textContent]),
      );
    assert.deepEqual(
      rows,
      saga.timeline.map((s) => [s.type, s.compensation ? 'COMPENSATION' : s.outcome]),
    );
    assert.match((await page.locator('#stuck-sagas h2').textContent()) ?? '', /^Stuck sagas \(\d+\)$/);

    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, `timeline-${saga.orderId}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(statSync(shot).size > 10_000, `a screenshot at ${shot}`);
    assert.deepEqual(errors, [], 'no script errors');
    await page.close();
  });

  it('asks for the key when opened without one, then lists the stuck sagas', async () => {
    const page = await context.newPage();
    await page.goto(`${TRACKER_URL}/sagas`);
    await page.locator('#key-form').waitFor({ timeout: 15_000 });
    await page.fill('#api-key', 'not-a-key');
    await page.click('#key-form button');
    await page.locator('#key-form label', { hasText: 'refused' }).waitFor({ timeout: 15_000 });
    await page.fill('#api-key', ACME_KEY);
    await page.click('#key-form button');
    const heading = page.locator('#stuck-sagas h2');
    await heading.waitFor({ timeout: 15_000 });
    assert.match((await heading.textContent()) ?? '', /^Stuck sagas \(\d+\)$/);
    await page.fill('#order-id', randomUUID());
    await page.click('#lookup button');
    const error = page.locator('#saga-error');
    await error.waitFor({ timeout: 15_000 });
    assert.match((await error.textContent()) ?? '', /no saga .* has been recorded/);
    await page.close();
  });
});
