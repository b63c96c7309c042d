export * from './reserve-stock/reserve-stock.handler';
export * from './release-stock/release-stock.handler';
export * from './expire-reservations/expire-reservations.handler';
export * from './commit-stock/commit-stock.handler';
export * from './return-sold-stock/return-sold-stock.handler';
export * from './set-stock/set-stock.handler';
export * from './repair-drift/repair-drift.handler';
export * from './fill-backorders/fill-backorders.handler';
