/** How the simulator treats a charge, chosen by its payment token (docs/api.md, PSP simulator tokens). */
export interface Behaviour {
  /** Where the money ends up. */
  outcome: 'succeeded' | 'failed';
  /** What the synchronous response says; `pending` means only a webhook or a lookup will tell. */
  respondWith: 'succeeded' | 'failed' | 'pending';
  /** The response hangs past the caller's timeout (the charge is made all the same). */
  hang: boolean;
  /** When a pending charge settles to its outcome. */
  settle: 'now' | '3ds' | 'late' | 'lost';
  /** Which webhooks are sent once it settles. */
  webhook: 'once' | 'after-hang' | 'three-times' | 'none' | 'success-then-stale-failure';
}

/** The token table, as docs/api.md lists it (PSP simulator tokens). */
export const BEHAVIOURS: Record<string, Behaviour> = {
  tok_success: {
    outcome: 'succeeded',
    respondWith: 'succeeded',
    hang: false,
    settle: 'now',
    webhook: 'once',
  },
  tok_decline: { outcome: 'failed', respondWith: 'failed', hang: false, settle: 'now', webhook: 'once' },
  tok_timeout_success: {
    outcome: 'succeeded',
    respondWith: 'succeeded',
    hang: true,
    settle: 'now',
    webhook: 'after-hang',
  },
  tok_timeout_decline: {
    outcome: 'failed',
    respondWith: 'failed',
    hang: true,
    settle: 'now',
    webhook: 'after-hang',
  },
  tok_3ds: { outcome: 'succeeded', respondWith: 'pending', hang: false, settle: '3ds', webhook: 'once' },
  tok_webhook_duplicate: {
    outcome: 'succeeded',
    respondWith: 'succeeded',
    hang: false,
    settle: 'now',
    webhook: 'three-times',
  },
  // Answered `pending` so that the synchronous response does not give the result away either.
  tok_webhook_lost: {
    outcome: 'succeeded',
    respondWith: 'pending',
    hang: false,
    settle: 'lost',
    webhook: 'none',
  },
  tok_webhook_late: {
    outcome: 'succeeded',
    respondWith: 'pending',
    hang: false,
    settle: 'late',
    webhook: 'once',
  },
  tok_out_of_order: {
    outcome: 'succeeded',
    respondWith: 'succeeded',
    hang: false,
    settle: 'now',
    webhook: 'success-then-stale-failure',
  },
};

/** The behaviour of a token, or undefined for a token the PSP does not know (the charge is refused). */
export const behaviourOf = (token: string): Behaviour | undefined =>
  Object.hasOwn(BEHAVIOURS, token) ? BEHAVIOURS[token] : undefined;
