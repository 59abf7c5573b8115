import { expect } from 'vitest';
import { api, type Daemon } from '../helpers/daemon.js';

/** Every page of a search through POST /api/v1/search, following next_cursor to the end (at most 99 pages). */
export async function allPages(d: Daemon, token: string, body: Record<string, unknown>): Promise<any[]> {
  const pages = [];
  let cursor: string | null = null;
  do {
    const res = await api(d, '/api/v1/search', { token, body: { ...body, ...(cursor ? { cursor } : {}) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages.push(res.body);
    cursor = res.body.next_cursor;
    expect(pages.length).toBeLessThan(100);
  } while (cursor);
  return pages;
}
