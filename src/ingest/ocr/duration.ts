/** A time limit as people read it in messages: "0.3 s", "120 s". */
export const seconds = (ms: number): string => `${ms < 10_000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`;
