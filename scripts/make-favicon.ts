/**
 * Draws src/web/static/favicon.ico (served at /favicon.ico): a magnifying glass over a page, in the UI's
 * accent blue, at 16 and 32 pixels, each a PNG inside the ICO container (Windows Vista+ and every browser
 * read PNG-in-ICO). Run: node --import tsx scripts/make-favicon.ts
 */
import { writeFileSync } from 'node:fs';
import { createCanvas } from '@napi-rs/canvas';

async function icon(size: number): Promise<Buffer> {
  const c = createCanvas(size, size);
  const g = c.getContext('2d');
  const u = size / 32;
  g.fillStyle = '#2457d6';
  g.beginPath();
  g.roundRect(0, 0, size, size, 6 * u);
  g.fill();
  // A page.
  g.fillStyle = '#ffffff';
  g.fillRect(7 * u, 5 * u, 14 * u, 18 * u);
  g.fillStyle = '#2457d6';
  for (const y of [9, 13, 17]) g.fillRect(10 * u, y * u, 8 * u, 1.5 * u);
  // A lens over its corner.
  g.strokeStyle = '#ffffff';
  g.lineWidth = 3 * u;
  g.beginPath();
  g.arc(20 * u, 19 * u, 5.5 * u, 0, Math.PI * 2);
  g.stroke();
  g.lineCap = 'round';
  g.beginPath();
  g.moveTo(24 * u, 23 * u);
  g.lineTo(28 * u, 27 * u);
  g.stroke();
  return c.encode('png');
}

const images = await Promise.all([16, 32].map(async (size) => ({ size, png: await icon(size) })));
const header = Buffer.alloc(6 + 16 * images.length);
header.writeUInt16LE(0, 0); // reserved
header.writeUInt16LE(1, 2); // type: icon
header.writeUInt16LE(images.length, 4);
let offset = header.length;
images.forEach(({ size, png }, i) => {
  const e = 6 + 16 * i;
  header.writeUInt8(size, e); // width
  header.writeUInt8(size, e + 1); // height
  header.writeUInt8(0, e + 2); // palette
  header.writeUInt8(0, e + 3);
  header.writeUInt16LE(1, e + 4); // planes
  header.writeUInt16LE(32, e + 6); // bits per pixel
  header.writeUInt32LE(png.length, e + 8);
  header.writeUInt32LE(offset, e + 12);
  offset += png.length;
});
writeFileSync(new URL('../src/web/static/favicon.ico', import.meta.url), Buffer.concat([header, ...images.map((i) => i.png)]));
