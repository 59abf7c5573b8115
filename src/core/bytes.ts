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
