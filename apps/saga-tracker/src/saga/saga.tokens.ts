/** The step timeouts of the stuck verdict (from the config): the API, the recorder and the sweep share them. */
export const STUCK_TIMEOUTS = Symbol('STUCK_TIMEOUTS');

/** The offset reader the read horizon samples end offsets and the group's commits with. */
export const HORIZON_OFFSETS = Symbol('HORIZON_OFFSETS');
