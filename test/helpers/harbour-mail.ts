/** A multipart message from the harbour master: its subject, its text, then each attachment part (lines, boundary "b"). */
export const harbourMail = (subject: string, body: string, parts: string[]): string =>
  [
    'From: Harbour Master <master@port.example>',
    'To: pilots@port.example',
    `Subject: ${subject}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    ...parts,
    '--b--',
    '',
  ].join('\r\n');
