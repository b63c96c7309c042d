export * from './carrier-policy';
export * from './shipment-status';
export * from './fulfillment.errors';
