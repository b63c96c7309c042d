import { randomBytes } from 'node:crypto';
import { DomainError } from '@checkout/contracts';
import { JournalEntry, PspJournal } from './psp.journal';

/** A charge as the PSP reports it. */
export interface Charge {
  id: string;
  object: 'charge';
  account: string;
  amount: number;
  currency: string;
  token: string;
  /** The merchant's own reference (our orderId). */
  reference: string;
  metadata: Record<string, string>;
  status: 'pending' | 'succeeded' | 'failed';
  failureCode: string | null;
  amountRefunded: number;
  refunded: boolean;
  idempotencyKey: string;
  /** Unix seconds, as webhooks carry it. */
  created: number;
  createdAt: string;
  updatedAt: string;
}

/** What a merchant asks to charge. */
export interface ChargeInput {
  amount: number;
  currency: string;
  token: string;
  reference: string;
  metadata: Record<string, string>;
}

/** A refund of (part of) a charge. */
export interface Refund {
  id: string;
  object: 'refund';
  account: string;
  charge: string;
  reference: string;
  amount: number;
  currency: string;
  reason: string | null;
  status: 'succeeded';
  idempotencyKey: string;
  createdAt: string;
}

/** A webhook event: a snapshot of the charge or refund it is about. */
export type WebhookEvent = {
  id: string;
  created: number;
  account: string;
} & (
  | { type: 'charge.succeeded' | 'charge.failed'; data: { object: Charge } }
  | { type: 'refund.succeeded' | 'refund.failed'; data: { object: Refund } }
);

/** One delivery attempt of a webhook event. */
export interface Delivery {
  eventId: string;
  type: string;
  reference: string;
  status: number | null;
  error: string | null;
  at: string;
  /** Set on a copy the storm knobs sent forged or replayed on purpose (it must have been refused). */
  forged?: 'bad-signature' | 'stale-timestamp';
}

/** A stored idempotent request: its fingerprint and the object it created. */
interface IdempotentRequest {
  fingerprint: string;
  objectId: string;
}

/** What an idempotent request came to: the object, and whether it was created earlier with the same key. */
export interface Idempotent<T> {
  object: T;
  replayed: boolean;
}

/** Why the PSP refused a request: answered with this code and its status. */
export class PspRequestError extends DomainError {}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** What the store holds of one reference, in creation order. */
interface ReferenceEntries {
  charges: Map<string, Charge>;
  refunds: Map<string, Refund>;
  events: WebhookEvent[];
  deliveries: Delivery[];
}

/**
 * The simulator's whole state: it is the external system and owns nothing of ours. In memory, and with a
 * journal (PSP_SIM_STATE_FILE) every change is also appended to disk and replayed when the process starts.
 */
export class PspStore {
  readonly charges = new Map<string, Charge>();
  readonly refunds = new Map<string, Refund>();
  readonly events: WebhookEvent[] = [];
  readonly deliveries: Delivery[] = [];
  private readonly idempotency = new Map<string, IdempotentRequest>();
  /** Everything of one reference, so that a ledger or a list by reference does not scan every charge. */
  private readonly byReference = new Map<string, ReferenceEntries>();

  constructor(private readonly journal?: PspJournal) {
    for (const entry of journal?.read() ?? []) this.apply(entry);
  }

  /** Records a delivery attempt of a webhook. */
  recordDelivery(delivery: Delivery): void {
    this.keepDelivery(delivery);
    this.journal?.append({ t: 'delivery', v: { ...delivery } });
  }

  private apply(entry: JournalEntry): void {
    switch (entry.t) {
      case 'charge':
        this.keep(entry.v as unknown as Charge);
        break;
      case 'refund':
        this.keep(entry.v as unknown as Refund);
        break;
      case 'idem':
        this.idempotency.set(entry.k, entry.v);
        break;
      case 'event':
        this.keepEvent(entry.v as unknown as WebhookEvent);
        break;
      case 'delivery':
        this.keepDelivery(entry.v as unknown as Delivery);
        break;
    }
  }

  private saveCharge(charge: Charge): void {
    this.journal?.append({ t: 'charge', v: { ...charge } });
  }

  /**
   * Creates a charge, or returns the one created earlier with the same key (same key never charges twice).
   * Synchronous on purpose: concurrent requests with one key cannot interleave in here.
   */
  createCharge(
    account: string,
    key: string,
    input: ChargeInput,
    initialStatus: Charge['status'],
  ): Idempotent<Charge> {
    const fingerprint = ['charge', input.amount, input.currency, input.token, input.reference];
    return this.once(account, key, fingerprint, this.charges, () => {
      const now = new Date();
      return {
        id: newId('ch'),
        object: 'charge',
        account,
        ...input,
        status: initialStatus,
        failureCode: initialStatus === 'failed' ? 'card_declined' : null,
        amountRefunded: 0,
        refunded: false,
        idempotencyKey: key,
        created: Math.floor(now.getTime() / 1000),
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
      };
    });
  }

  /** Moves a pending charge to its outcome. */
  settle(chargeId: string, outcome: 'succeeded' | 'failed'): Charge {
    const charge = this.charges.get(chargeId)!;
    if (charge.status === 'pending') {
      charge.status = outcome;
      charge.failureCode = outcome === 'failed' ? 'card_declined' : null;
      charge.updatedAt = new Date().toISOString();
      this.saveCharge(charge);
    }
    return charge;
  }

  /** Refunds a succeeded charge in full (or the given amount), once per key. */
  createRefund(
    account: string,
    key: string,
    input: { charge: string; amount?: number; reason?: string | null },
  ): Idempotent<Refund> {
    const fingerprint = ['refund', input.charge, input.amount ?? null];
    return this.once(account, key, fingerprint, this.refunds, () => {
      const charge = this.charges.get(input.charge);
      if (!charge || charge.account !== account)
        throw new PspRequestError('NO_SUCH_CHARGE', 'no such charge');
      if (charge.status !== 'succeeded')
        throw new PspRequestError('CHARGE_NOT_CAPTURED', `charge is ${charge.status}, nothing to refund`);
      const remaining = charge.amount - charge.amountRefunded;
      const amount = input.amount ?? remaining;
      if (remaining === 0) throw new PspRequestError('CHARGE_ALREADY_REFUNDED', 'charge is already refunded');
      if (amount > remaining || amount <= 0)
        throw new PspRequestError('AMOUNT_TOO_LARGE', `at most ${remaining} can be refunded`);
      const refund: Refund = {
        id: newId('re'),
        object: 'refund',
        account,
        charge: charge.id,
        reference: charge.reference,
        amount,
        currency: charge.currency,
        reason: input.reason ?? null,
        status: 'succeeded',
        idempotencyKey: key,
        createdAt: new Date().toISOString(),
      };
      charge.amountRefunded += amount;
      charge.refunded = charge.amountRefunded === charge.amount;
      charge.updatedAt = refund.createdAt;
      this.saveCharge(charge);
      return refund;
    });
  }

  /**
   * The Idempotency-Key rule of every POST: the first request with a key creates its object; a later one with
   * the same key and the same fingerprint gets that object back (replayed), with another fingerprint a 422.
   * A create that throws stores nothing, so the key stays free.
   */
  private once<T extends { id: string }>(
    account: string,
    key: string,
    fingerprint: unknown[],
    objects: Map<string, T>,
    create: () => T,
  ): Idempotent<T> {
    const print = JSON.stringify(fingerprint);
    const existing = this.idempotency.get(`${account}:${key}`);
    if (existing) {
      if (existing.fingerprint !== print)
        throw new PspRequestError(
          'IDEMPOTENCY_KEY_REUSED',
          'this Idempotency-Key was used with another request',
        );
      return { object: objects.get(existing.objectId)!, replayed: true };
    }
    const object = create();
    this.keep(object as unknown as Charge | Refund);
    const request = { fingerprint: print, objectId: object.id };
    this.idempotency.set(`${account}:${key}`, request);
    const kind = (object as unknown as { object: string }).object === 'refund' ? 'refund' : 'charge';
    this.journal?.append({ t: kind, v: { ...object } } as JournalEntry, {
      t: 'idem',
      k: `${account}:${key}`,
      v: request,
    });
    return { object, replayed: false };
  }

  /** A new webhook event about a charge or refund (a snapshot of it as it is now, or as given). */
  newEvent<E extends WebhookEvent>(
    type: E['type'],
    object: E['data']['object'],
    created = Math.floor(Date.now() / 1000),
  ): WebhookEvent {
    const event = {
      id: newId('evt'),
      type,
      created,
      account: object.account,
      data: { object: { ...object } },
    } as WebhookEvent;
    this.keepEvent(event);
    this.journal?.append({ t: 'event', v: { ...event } as unknown as { id: string } });
    return event;
  }

  /** The account's charges, by our reference or by creation time window [from, to). */
  listCharges(
    account: string,
    filter: { reference?: string; from?: Date; to?: Date; limit: number },
  ): Charge[] {
    const out: Charge[] = [];
    const charges = filter.reference
      ? (this.byReference.get(filter.reference)?.charges.values() ?? [])
      : this.charges.values();
    for (const c of charges) {
      if (c.account !== account) continue;
      const at = Date.parse(c.createdAt);
      if (filter.from && at < filter.from.getTime()) continue;
      if (filter.to && at >= filter.to.getTime()) continue;
      out.push(c);
      if (out.length >= filter.limit) break;
    }
    return out;
  }

  /** Everything the PSP knows about one reference, for tests. */
  ledger(reference: string) {
    const entries = this.byReference.get(reference);
    return {
      charges: [...(entries?.charges.values() ?? [])],
      refunds: [...(entries?.refunds.values() ?? [])],
      events: [...(entries?.events ?? [])],
      deliveries: [...(entries?.deliveries ?? [])],
    };
  }

  /** Stores a charge or refund (a journal replays later versions of one id: the last one wins). */
  private keep(object: Charge | Refund): void {
    const entries = this.entriesOf(object.reference);
    if (object.object === 'refund') {
      this.refunds.set(object.id, object);
      entries.refunds.set(object.id, object);
    } else {
      this.charges.set(object.id, object);
      entries.charges.set(object.id, object);
    }
  }

  private keepDelivery(delivery: Delivery): void {
    this.deliveries.push(delivery);
    this.entriesOf(delivery.reference).deliveries.push(delivery);
  }

  private keepEvent(event: WebhookEvent): void {
    this.events.push(event);
    this.entriesOf(event.data.object.reference).events.push(event);
  }

  private entriesOf(reference: string): ReferenceEntries {
    let entries = this.byReference.get(reference);
    if (!entries) {
      entries = { charges: new Map(), refunds: new Map(), events: [], deliveries: [] };
      this.byReference.set(reference, entries);
    }
    return entries;
  }
}
