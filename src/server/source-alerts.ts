/**
 * Telling a source's people that it needs someone (sources/alerts.ts): its project's owners and editors get a
 * notice in the web's bell, and an e-mail when this server sends mail.
 */
import type { AccessControl } from '../access/access-control.js';
import type { Logger } from '../core/logger.js';
import type { Mailer } from '../mail/mailer.js';
import { sourceAlertMail } from '../mail/messages.js';
import type { SourceAlerts } from '../sources/alerts.js';
import type { NoticeStore } from '../store/sql/notices.js';
import type { ProjectStore } from '../store/sql/projects.js';
import type { HeldDeletions, SourceRecord } from '../store/sql/sources.js';

/** Each person gets a notice in the bell, and (through the outbox, when `--smtp-url` is set) one e-mail per new notice. */
export function sourceAlerts(deps: { access: Pick<AccessControl, 'managersOf'>; notices: NoticeStore; projects: Pick<ProjectStore, 'get'>; log: Logger; mailer: Pick<Mailer, 'send' | 'link'> }): SourceAlerts {
  const tell = async (source: SourceRecord, kind: 'source.held' | 'source.paused' | 'source.failing', reason: string) => {
    const people = await deps.access.managersOf(source.projectId);
    const project = (await deps.projects.get(source.projectId))?.name ?? source.projectId;
    const link = `/projects/${source.projectId}/sources`;
    const message = `${source.url} (${project}): ${reason}`;
    const told = await deps.notices.notify(
      people.map((p) => p.id),
      { kind, projectId: source.projectId, subjectId: source.id, message, link },
    );
    deps.log.info({ event: 'source.alerted', source_id: source.id, kind, notified: people.length, new_notices: told.length }, "told the source's owners and editors");
    // Mailed once per episode, as the notice is new: a hold that goes on updates the notice and sends nothing more.
    for (const person of people.filter((p) => told.includes(p.id))) {
      await deps.mailer.send(sourceAlertMail({ to: person.email, publicUrl: deps.mailer.link(''), project, source: source.url, reason, link: deps.mailer.link(link) }));
    }
  };
  return {
    held: (source: SourceRecord, held: HeldDeletions) => tell(source, 'source.held', `${held.count} document${held.count === 1 ? '' : 's'} would be removed; nothing is removed until you confirm (${held.reason.split(':')[0]})`),
    paused: (source: SourceRecord, reason: string) => tell(source, 'source.paused', `paused, ${reason}; once there is room (a higher quota, or space freed), resume it`),
    failing: (source: SourceRecord, error: string, failures: number) => tell(source, 'source.failing', `its last ${failures} passes failed: ${error}`),
  };
}
