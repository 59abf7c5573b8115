/**
 * The text of every mail docsearch sends: plain text, short, saying what happened, what the link does and how long
 * it works, and what to do when it was not expected. Links are absolute (`--public-url`).
 */
import type { MailDraft } from './mailer.js';

const host = (publicUrl: string): string => {
  try {
    return new URL(publicUrl).host;
  } catch {
    return publicUrl;
  }
};

/** "27 Nov 2026, 14:05 UTC": unambiguous in any country. */
export const mailTime = (ms: number): string => `${new Date(ms).toLocaleString('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false })} UTC`;

export function inviteMail(m: { to: string; link: string; publicUrl: string; by: string | null; expiresAt: number; admin: boolean; group: string | null }): MailDraft {
  const what = [m.admin ? 'as an administrator' : null, m.group ? `in the group "${m.group}"` : null].filter(Boolean).join(', ');
  return {
    kind: 'invite',
    to: m.to,
    subject: `You are invited to docsearch at ${host(m.publicUrl)}`,
    text:
      `${m.by ?? 'An administrator'} invited you to the document library at ${m.publicUrl}${what ? ` (${what})` : ''}.\n\n` +
      `Choose a password to make your account here (the link works once, until ${mailTime(m.expiresAt)}):\n\n  ${m.link}\n\n` +
      'If you did not expect this invitation, ignore this mail: nothing is made without you.\n',
  };
}

export function passwordResetMail(m: { to: string; link: string; publicUrl: string; byAdmin: boolean; expiresAt: number }): MailDraft {
  return {
    kind: 'password_reset',
    to: m.to,
    subject: `Set a new docsearch password (${host(m.publicUrl)})`,
    text:
      (m.byAdmin
        ? `An administrator of ${m.publicUrl} sent you a link to set a new password for ${m.to}.\n\n`
        : `Someone, hopefully you, asked to set a new password for ${m.to} at ${m.publicUrl}.\n\n`) +
      `Set it here (the link works once, until ${mailTime(m.expiresAt)}):\n\n  ${m.link}\n\n` +
      'Setting a new password signs your account out of every browser. ' +
      'If you did not ask for this, ignore this mail: your password stays as it is.\n',
  };
}

export function signInNoticeMail(m: { to: string; publicUrl: string; browser: string; ip: string | null; at: number }): MailDraft {
  return {
    kind: 'sign_in_notice',
    to: m.to,
    subject: `New sign-in to docsearch (${host(m.publicUrl)})`,
    text:
      `Your account ${m.to} signed in at ${m.publicUrl} from a browser it had not used before:\n\n` +
      `  ${m.browser}\n${m.ip ? `  from ${m.ip}\n` : ''}  at ${mailTime(m.at)}\n\n` +
      `If this was you, there is nothing to do. If it was not, set a new password now (${m.publicUrl}/forgot-password) ` +
      `and look at the sessions and second factors in Settings → Security (${m.publicUrl}/settings/security).\n`,
  };
}

/** A paused or failing source, for its project's owners and editors (sources/ sends it through the outbox). */
export function sourceAlertMail(m: { to: string; publicUrl: string; project: string; source: string; reason: string; link: string }): MailDraft {
  return {
    kind: 'source_alert',
    to: m.to,
    subject: `Source needs attention: ${m.source} in ${m.project}`,
    text: `The source ${m.source} of the project ${m.project} at ${m.publicUrl} needs attention:\n\n  ${m.reason}\n\nSee it here:\n\n  ${m.link}\n`,
  };
}

export function testMail(m: { to: string; publicUrl: string; by: string }): MailDraft {
  return {
    kind: 'test',
    to: m.to,
    subject: `docsearch test mail (${host(m.publicUrl)})`,
    text: `${m.by} sent this test mail from ${m.publicUrl}: mail from this docsearch reaches you.\n`,
  };
}
