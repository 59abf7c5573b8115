/** Milliseconds since the epoch. Injected wherever expiry matters, so tests can move time. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

export const toIso = (ms: number): string => new Date(ms).toISOString();
