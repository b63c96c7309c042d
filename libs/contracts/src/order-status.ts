/**
 * Statuses in which an order's saga has ended. Two still move on: money that arrived can be refunded
 * (-> REFUNDED), and a restock fills a backorder (BACKORDERED -> PAID -> SHIPPED).
 */
export const TERMINAL_ORDER_STATUSES = [
  'SHIPPED',
  'REJECTED',
  'CANCELLED',
  'BACKORDERED',
  'REFUNDED',
] as const;

/**
 * Order statuses as the order API shows them (docs/api.md, OrderView): one list for the
 * order service, the saga tracker, the conservation checker and any client.
 */
export const ORDER_STATUSES = ['PENDING', 'AWAITING_PAYMENT', 'PAID', ...TERMINAL_ORDER_STATUSES] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** Whether an order status is one its saga ends in (TERMINAL_ORDER_STATUSES). */
export const isTerminalStatus = (status: string): boolean =>
  (TERMINAL_ORDER_STATUSES as readonly string[]).includes(status);

/** The payment service's payment states, as the order mirrors them. */
export const PAYMENT_STATES = ['created', 'pending', 'unknown', 'succeeded', 'failed', 'refunded'] as const;
export type PaymentState = (typeof PAYMENT_STATES)[number];
