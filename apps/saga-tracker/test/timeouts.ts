import { StuckTimeouts } from '../src/saga/domain/stuck-policy';

/**
 * Step timeouts of the specs that build the recorder themselves, and of the stuck policy's unit spec (its
 * figures count on payment 10 s, refund 20 s, every other step 5 s, 60 s overall): short, like the stack's test
 * configuration.
 */
export const TEST_TIMEOUTS: StuckTimeouts = {
  overallMs: 60_000,
  steps: {
    reservation: 5_000,
    payment: 10_000,
    'stock-commit': 5_000,
    'order-paid': 5_000,
    shipment: 5_000,
    'order-cancel': 5_000,
    refund: 20_000,
    'stock-release': 5_000,
    'shipment-cancel': 5_000,
  },
};
