import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import {
  formatMoney,
  orderConfirmationEmail,
  outOfStockApologyEmail,
  paymentFailedEmail,
} from './notification-templates';
import { VOUCHER_CODE_PATTERN, generateVoucherCode } from './voucher-code';

const orderId = '7f3c2a10-1111-4222-8333-944445555666';

describe('customer emails', () => {
  it('the confirmation lists every line and the total paid, with the short order reference', () => {
    const email = orderConfirmationEmail({
      orderId,
      currency: 'VND',
      total: 135_000,
      lines: [
        { sku: 'SKU-1', quantity: 2, lineTotal: 100_000 },
        { sku: 'SKU-2', quantity: 1, lineTotal: 35_000 },
      ],
    });
    assert.equal(email.subject, 'Your order 7F3C2A10 is confirmed');
    assert.match(email.body, /- 2 x SKU-1: 100,000 VND/);
    assert.match(email.body, /- 1 x SKU-2: 35,000 VND/);
    assert.match(email.body, /Total paid: 135,000 VND/);
  });

  it('the payment-failed email says nothing was charged and why', () => {
    const email = paymentFailedEmail({ orderId, reason: 'card_declined' });
    assert.equal(email.subject, 'Payment for your order 7F3C2A10 did not go through');
    assert.match(email.body, /card_declined/);
    assert.match(email.body, /not been charged/);
  });

  it('the apology names the missing SKUs, promises the refund and carries the voucher code', () => {
    const email = outOfStockApologyEmail({
      orderId,
      skus: ['SKU-9'],
      voucherCode: 'SORRY-ABCDEFGHJK',
      percentOff: 10,
    });
    assert.equal(email.subject, 'Sorry: we could not fulfil your order 7F3C2A10');
    assert.match(email.body, /SKU-9 turned out to be out of stock/);
    assert.match(email.body, /refunded in full/);
    assert.match(email.body, /10% off your next order: SORRY-ABCDEFGHJK/);
  });

  it('formats minor units by currency exponent', () => {
    assert.equal(formatMoney(50_000, 'VND'), '50,000 VND');
    assert.equal(formatMoney(1250, 'EUR'), '12.50 EUR');
    assert.equal(formatMoney(5, 'USD'), '0.05 USD');
  });
});

describe('apology voucher codes', () => {
  it('look like SORRY-XXXXXXXXXX with unambiguous characters only', () => {
    for (let i = 0; i < 200; i++) assert.match(generateVoucherCode(), VOUCHER_CODE_PATTERN);
  });

  it('come from the random source, so two draws differ', () => {
    assert.equal(
      generateVoucherCode(() => new Uint8Array(10)),
      'SORRY-AAAAAAAAAA',
    );
    assert.notEqual(generateVoucherCode(), generateVoucherCode());
  });
});
