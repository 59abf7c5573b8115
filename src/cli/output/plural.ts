/** "1 chunk", "3 chunks", "0 chunks": a count with its noun in agreement (regular English plurals only). */
export const count = (n: number, noun: string, plural = `${noun}s`): string => `${n} ${n === 1 ? noun : plural}`;
