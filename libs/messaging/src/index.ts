export * from './messaging.migration';
export * from './outbox.writer';
export * from './event-consumer';
export * from './errors';
export * from './kafka';
export * from './logger';
export * from './sql';
