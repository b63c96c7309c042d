/** A (sku, quantity) line of a shipment. */
export interface ShipmentLine {
  sku: string;
  quantity: number;
}

/** What the carrier is asked to ship. */
export interface ShipmentRequest {
  shipmentId: string;
  customerId: string;
  lines: readonly ShipmentLine[];
}

/** The carrier's answer: booked with a tracking number, or refused with a reason. */
export type CarrierDecision =
  | { accepted: true; carrier: string; trackingNumber: string }
  | { accepted: false; carrier: string; reason: string };

/** Which shipments the (simulated) carrier refuses: SKUs it will not carry, addresses it cannot reach. */
export interface CarrierRules {
  carrier: string;
  failSkus: readonly string[];
  failCustomers: readonly string[];
}

/** Whether a value matches a pattern: exact, or a prefix when the pattern ends in `*`. */
export function matchesPattern(value: string, pattern: string): boolean {
  return pattern.endsWith('*') ? value.startsWith(pattern.slice(0, -1)) : value === pattern;
}

/** The tracking number the carrier assigns a booked shipment: stable for a shipment id. */
export function trackingNumberOf(carrier: string, shipmentId: string): string {
  const prefix =
    carrier
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(0, 4)
      .toUpperCase() || 'TRK';
  return `${prefix}${shipmentId.replace(/-/g, '').slice(0, 16).toUpperCase()}`;
}

/**
 * The simulated carrier's booking decision, a pure function of the request: refuses when a line's SKU or
 * the customer's address is flagged, otherwise books it. The decision is local, so no network call ever
 * runs inside the consumer's transaction.
 */
export function decideBooking(rules: CarrierRules, request: ShipmentRequest): CarrierDecision {
  const refusedSkus = request.lines
    .map((l) => l.sku)
    .filter((sku) => rules.failSkus.some((p) => matchesPattern(sku, p)));
  if (refusedSkus.length > 0) {
    return {
      accepted: false,
      carrier: rules.carrier,
      reason: `carrier_refused_sku: ${[...new Set(refusedSkus)].join(', ')}`.slice(0, 255),
    };
  }
  if (rules.failCustomers.some((p) => matchesPattern(request.customerId, p))) {
    return { accepted: false, carrier: rules.carrier, reason: 'carrier_undeliverable_address' };
  }
  return {
    accepted: true,
    carrier: rules.carrier,
    trackingNumber: trackingNumberOf(rules.carrier, request.shipmentId),
  };
}
