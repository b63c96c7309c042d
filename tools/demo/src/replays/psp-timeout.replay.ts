import { OffContract } from '../http/demo-api';
import { ReplayContext, runWave } from './checkout-wave';
import { ReplayReport, commonExpectations } from './replay-report';

/**
 * Replays the PSP-timeout incident on a fresh SKU with stock for everyone: each checkout pays with
 * tok_timeout_success, whose charge answer hangs past payment's PSP timeout while the charge succeeds and the
 * webhook comes later. The payment must go `unknown`, never `failed`: every order ends SHIPPED (PAID on the
 * way), none CANCELLED, exactly one charge each, no refund.
 */
export async function replayPspTimeout(ctx: ReplayContext, orders: number): Promise<ReplayReport> {
  const { api } = ctx;
  const sku = `PSP-TIMEOUT-${ctx.runId}`;
  const unitPrice = 50_000;
  await api.putPrice(sku, unitPrice);
  const stock = await api.putStock(sku, orders);
  if (stock.available !== orders)
    throw new OffContract(`fresh SKU ${sku} came back as ${JSON.stringify(stock)}`);
  const title = 'PSP timeout';
  ctx.log(
    `${title}: ${orders} checkouts of ${sku} with tok_timeout_success (the PSP answers after the timeout)`,
  );

  const r = await runWave(ctx, {
    name: title,
    sku,
    initial: orders,
    token: 'tok_timeout_success',
    shoppers: orders,
    unitPrice,
  });
  const shipped = (r.statuses.SHIPPED ?? 0) + (r.statuses.PAID ?? 0);
  const cancelled = r.statuses.CANCELLED ?? 0;
  const oneChargeEach = r.input.orders.every(
    (o) => o.ledger.charges.filter((c) => c.status === 'succeeded').length === 1,
  );
  return {
    title,
    result: r,
    expectations: [
      {
        ok: r.answers.accepted === orders,
        text: `every checkout accepted (${r.answers.accepted} of ${orders})`,
      },
      {
        ok: r.sawUnknown === orders,
        text: `the incident happened: ${r.sawUnknown} of ${orders} PSP answers came after the timeout (payment unknown)`,
      },
      { ok: shipped === orders, text: `every order PAID/SHIPPED (${shipped} of ${orders})` },
      { ok: cancelled === 0, text: `no order CANCELLED (${cancelled})` },
      { ok: oneChargeEach, text: `exactly one charge per order (${r.charges} charges for ${orders} orders)` },
      { ok: r.refunds === 0, text: `no refund (${r.refunds})` },
      ...commonExpectations(r),
    ],
    contrast: `vs the seed's naive system (timeout = failure): these ${r.sawUnknown} orders CANCELLED, their stock returned, and all ${r.sawUnknown} customers charged anyway when the webhook said paid`,
    headline: `${r.sawUnknown} of ${orders} PSP answers came after the timeout -> payment unknown, then the webhook: ${shipped} PAID/SHIPPED, ${cancelled} CANCELLED`,
  };
}
