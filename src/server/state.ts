import type { Principal } from '../auth/principal.js';
import type { WebSession } from '../auth/web-sessions.js';
import type { Logger } from '../core/logger.js';

/** What middleware leaves on ctx.state for later steps. */
export interface AppState {
  requestId: string;
  log: Logger;
  /** Set by the bearer middleware on /api/v1 routes. */
  principal?: Principal;
  /** Set by the web-session middleware on pages. */
  session?: WebSession | null;
  /** The signed-in person's unread notices, once a page knows who it is for (the header's bell shows it). */
  unreadNotices?: number;
}
