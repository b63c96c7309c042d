export * from './carrier-policy';
export * from './shipment-status';
