/** The customer emails fulfillment sends. */
export { NOTIFICATION_KINDS, type NotificationKind } from '@checkout/contracts';

/** Subject and body of one email. */
export interface EmailContent {
  subject: string;
  body: string;
}

/** A line as the confirmation lists it. */
export interface ConfirmedLine {
  sku: string;
  quantity: number;
  lineTotal: number;
}

/** Currencies without minor units (ISO 4217 exponent 0) among those merchants use. */
const ZERO_DECIMAL = new Set(['VND', 'JPY', 'KRW', 'CLP', 'ISK', 'UGX', 'XAF', 'XOF']);

/** Money in minor units as a customer reads it, e.g. `50,000 VND` or `12.50 EUR`. */
export function formatMoney(minor: number, currency: string): string {
  if (ZERO_DECIMAL.has(currency)) return `${minor.toLocaleString('en-US')} ${currency}`;
  const major = (minor / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return `${major} ${currency}`;
}

/** The short order reference shown to customers: the first block of the order id. */
export const orderReference = (orderId: string): string => orderId.split('-')[0].toUpperCase();

/** Order confirmation, sent when the order is paid. */
export function orderConfirmationEmail(o: {
  orderId: string;
  lines: readonly ConfirmedLine[];
  total: number;
  currency: string;
}): EmailContent {
  const ref = orderReference(o.orderId);
  const lines = o.lines.map((l) => `- ${l.quantity} x ${l.sku}: ${formatMoney(l.lineTotal, o.currency)}`);
  return {
    subject: `Your order ${ref} is confirmed`,
    body: [
      `Thank you for your order ${ref}. We received your payment and are preparing the shipment.`,
      '',
      ...lines,
      `Total paid: ${formatMoney(o.total, o.currency)}`,
    ].join('\n'),
  };
}

/** Payment failed: nothing was charged, the order is cancelled. */
export function paymentFailedEmail(o: { orderId: string; reason: string }): EmailContent {
  const ref = orderReference(o.orderId);
  return {
    subject: `Payment for your order ${ref} did not go through`,
    body: [
      `We could not take the payment for your order ${ref} (${o.reason}), so the order was cancelled.`,
      'You have not been charged. You are welcome to try again with another payment method.',
    ].join('\n'),
  };
}

/** Paid but out of stock: the money is refunded, and a voucher says sorry. */
export function outOfStockApologyEmail(o: {
  orderId: string;
  skus: readonly string[];
  voucherCode: string;
  percentOff: number;
}): EmailContent {
  const ref = orderReference(o.orderId);
  return {
    subject: `Sorry: we could not fulfil your order ${ref}`,
    body: [
      `We are sorry: after your payment for order ${ref} went through, ${o.skus.join(', ')} turned out to be out of stock.`,
      'Your payment is being refunded in full; you will see it on your statement within a few days.',
      `As an apology, here is a voucher for ${o.percentOff}% off your next order: ${o.voucherCode}`,
    ].join('\n'),
  };
}
