/** Injection token of the parsed inventory configuration. */
export const INVENTORY_CONFIG = Symbol('INVENTORY_CONFIG');
