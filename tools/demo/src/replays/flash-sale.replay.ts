import { OffContract } from '../http/demo-api';
import { ReplayContext, runWave } from './checkout-wave';
import { ReplayReport, commonExpectations } from './replay-report';

/** The flash sale of the seed: `units` of one SKU, `buyers` shoppers at the same instant. */
export interface FlashSaleOptions {
  units: number;
  buyers: number;
  /** With the Redis gate in front of the database (PUT /v1/admin/flash-sales/{sku} { enabled: true }). */
  gate: boolean;
}

/**
 * Replays the flash-sale incident on a fresh SKU: every buyer through `POST /v1/checkout` at once, tok_success
 * for all. The system must sell exactly the stock, never more, with every buyer answered (202, or 409
 * OUT_OF_STOCK when the gate said no) and every saga ended.
 */
export async function replayFlashSale(ctx: ReplayContext, opts: FlashSaleOptions): Promise<ReplayReport> {
  const { api } = ctx;
  const sku = `FLASH-${opts.gate ? 'GATE' : 'NOGATE'}-${ctx.runId}`;
  const unitPrice = 50_000;
  await api.putPrice(sku, unitPrice);
  const stock = await api.putStock(sku, opts.units);
  if (stock.available !== opts.units || stock.reserved !== 0 || stock.sold !== 0)
    throw new OffContract(`fresh SKU ${sku} came back as ${JSON.stringify(stock)}`);
  const sale = await api.putFlashSale(sku, opts.gate);
  if (sale.enabled !== opts.gate || (opts.gate && sale.available !== opts.units))
    throw new OffContract(`the flash-sale gate of ${sku} answered ${JSON.stringify(sale)}`);
  const title = `flash sale, gate ${opts.gate ? 'on' : 'off'}`;
  ctx.log(
    `${title}: ${opts.units} units of ${sku}, ${opts.buyers} concurrent buyers` +
      (opts.gate ? `, Redis gate primed with ${sale.available}` : ', no gate: the database decides'),
  );

  const r = await runWave(ctx, {
    name: title,
    sku,
    initial: opts.units,
    token: 'tok_success',
    shoppers: opts.buyers,
    unitPrice,
  });
  const expectedSold = Math.min(opts.units, opts.buyers);
  const sold = r.stock?.sold ?? 0;
  const otherAnswers = Object.values(r.answers.other).reduce((a, b) => a + b, 0);
  return {
    title,
    result: r,
    expectations: [
      { ok: sold === expectedSold, text: `sold ${sold} of ${opts.units} (expected ${expectedSold})` },
      {
        ok: otherAnswers === 0 && r.answers.accepted + r.answers.outOfStock === opts.buyers,
        text: `every buyer answered 202 or 409 OUT_OF_STOCK (${otherAnswers} other answers)`,
      },
      { ok: r.chargedTwice === 0, text: `no order charged twice (${r.chargedTwice})` },
      ...commonExpectations(r),
    ],
    contrast: opts.gate
      ? `the gate answered ${r.answers.outOfStock} of ${opts.buyers} buyers from Redis: the database saw ${r.answers.accepted} checkouts, not ${opts.buyers}`
      : "vs the seed's naive read-check-write (500 units, 540 buyers): sold 540 of 500, stock then said {available: 499, reserved: 0}",
    headline: `sold ${sold} of ${opts.units}`,
  };
}
