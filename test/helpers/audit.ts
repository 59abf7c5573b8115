import type { AuditEvent, AuditLog } from '../../src/core/audit.js';

/** An audit log for tests of a service alone: keeps what was recorded, for the test to read. */
export class RecordedAudit implements AuditLog {
  readonly events: AuditEvent[] = [];
  async record(event: AuditEvent): Promise<void> {
    this.events.push(event);
  }
}
