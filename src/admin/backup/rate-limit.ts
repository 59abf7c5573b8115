/**
 * A cap on a backup's read rate (`--max-rate`), so that copying a large library does not take the disk or the
 * network from the daemon serving it. A token bucket holding one second's worth.
 */
export class RateLimit {
  private tokens: number;
  private last = Date.now();

  constructor(private readonly bytesPerSecond: number) {
    this.tokens = bytesPerSecond;
  }

  /** Waits until `n` more bytes may go. */
  async take(n: number): Promise<void> {
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(this.bytesPerSecond, this.tokens + ((now - this.last) / 1000) * this.bytesPerSecond);
      this.last = now;
      if (this.tokens >= Math.min(n, this.bytesPerSecond)) {
        this.tokens -= n;
        return;
      }
      await new Promise((r) => setTimeout(r, Math.ceil(((Math.min(n, this.bytesPerSecond) - this.tokens) / this.bytesPerSecond) * 1000)));
    }
  }
}

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** `500k`, `20M`, `1G` (bytes a second, binary units; a trailing `B/s` is allowed); null when it is not one. */
export function parseRate(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?(?:\/s)?$/i.exec(text.trim());
  if (!m) return null;
  const n = Number(m[1]) * UNITS[m[2]!.toLowerCase()]!;
  return n >= 1 ? Math.floor(n) : null;
}
