/**
 * The address `docsearch serve` listens on by default. Duplicated from DEFAULT_PORT in
 * src/server/config.ts on purpose: cli/ talks HTTP only and imports nothing from server/.
 */
export const DEFAULT_SERVER = 'http://127.0.0.1:7411';
