export * from './create-shipment/create-shipment.handler';
export * from './cancel-shipment/cancel-shipment.handler';
