/**
 * A byte count as people read it, in binary units with their IEC names ("992 KiB", "1.5 MiB"), one decimal
 * below 10 — the one way the CLI and the web pages write a size, so the same file reads the same in both.
 * A unit moves up also when rounding would show 1024 (1,048,500 bytes is "1.0 MiB", not "1024 KiB").
 */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (Math.round(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 9.95 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

const UNITS: Record<string, number> = { b: 1, kb: 1e3, kib: 1024, mb: 1e6, mib: 1024 ** 2, gb: 1e9, gib: 1024 ** 3, tb: 1e12, tib: 1024 ** 4 };

/** "500MiB", "2 GB", "1.5GiB" as bytes (a bare number is MiB, as in --max-upload-mb); null for anything else. */
export function parseByteSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)?\s*$/i.exec(text);
  if (!m) return null;
  const bytes = Math.round(Number(m[1]) * UNITS[(m[2] ?? 'mib').toLowerCase()]!);
  return Number.isSafeInteger(bytes) ? bytes : null;
}
